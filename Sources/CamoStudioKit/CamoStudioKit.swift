// CamoStudioKit: see the module's files.
