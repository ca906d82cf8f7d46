// CamoCapture: see the module's files.
