/// CamoPreview: the live preview window of `camo-studio camera --preview`. It shows the agent's decoded picture,
/// the same one fed to the virtual webcam, in an SDL2 window with a line of figures (frame rate, bitrate, latency,
/// connection state) drawn over its top-left corner with a small built-in bitmap font.
///
/// ``PreviewWindow`` is the window (SDL on a thread of its own), ``PreviewFigures`` the figures shown with each
/// frame, ``PreviewStatistics`` what became of the frames, ``PreviewError`` why a window could not open.
public enum CamoPreview {}
