import CamoMedia

/// What a ``PreviewWindow`` did with the frames it was given.
///
/// Every frame passed to ``PreviewWindow/show(_:figures:)`` is counted in `shown` and, once the window has caught
/// up, in exactly one of `drawn`, `replaced` or `discarded`.
public struct PreviewStatistics: Sendable, Hashable {
    /// Frames passed to ``PreviewWindow/show(_:figures:)``.
    public var shown = 0
    /// Frames drawn in the window.
    public var drawn = 0
    /// Frames replaced by a newer one before they were drawn (the window fell behind).
    public var replaced = 0
    /// Frames not drawn because the window was closed, or was not BGRA or had too few bytes.
    public var discarded = 0
    /// How many times the window's texture was made: once, and again for each change of picture size.
    public var textureCreations = 0
    /// The size of the picture drawn last, or nil before the first.
    public var pictureSize: VideoSize?
}
