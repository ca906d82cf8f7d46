/// A corner of an activity zone in the zone space (``ZoneSpace``): the model's TwoDCartesianVertex.
public struct ZoneVertex: Sendable, Hashable, Codable {
    /// Distance from the left edge, 0...``ZoneSpace/max``.
    public var x: UInt16
    /// Distance from the top edge, 0...``ZoneSpace/max``.
    public var y: UInt16

    /// A vertex at (`x`, `y`).
    public init(x: UInt16, y: UInt16) {
        self.x = x
        self.y = y
    }
}
