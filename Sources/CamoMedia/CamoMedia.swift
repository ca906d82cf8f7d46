// CamoMedia: see the module's files.
