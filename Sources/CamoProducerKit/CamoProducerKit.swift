// CamoProducerKit: see the module's files.
