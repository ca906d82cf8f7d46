import CamoPreview
import Testing
