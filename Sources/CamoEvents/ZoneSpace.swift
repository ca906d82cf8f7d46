/// The coordinate space of activity zones: the model's `twoDCartesianMax`. Vertices lie in `0...max` on both
/// axes, the origin top-left, x to the right and y down. The space covers the whole picture whatever its size or
/// aspect ratio: x = `max` is the right edge, y = `max` the bottom edge.
public enum ZoneSpace {
    /// The largest coordinate on either axis (the model's `twoDCartesianMax`).
    public static let max: UInt16 = 2048
}
