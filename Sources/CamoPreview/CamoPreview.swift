/// The live preview window of `camo-studio camera --preview` (SDL2): the picture as it is fed to the virtual
/// camera, with its frame rate, bitrate and latency.
public enum CamoPreview {}
