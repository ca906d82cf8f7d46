// CamoWire: see the module's files.
