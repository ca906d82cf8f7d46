/// What the motion detector saw in one zone (or the whole picture) on one frame.
public struct ZoneMotion: Sendable, Hashable {
    /// The zone's id; nil for the whole picture (when there are no zones).
    public var zoneID: UInt16?
    /// The zone's cells on the grid.
    public var cells: Int
    /// Cells that changed on this frame.
    public var changedCells: Int
    /// Changed cells needed for motion at the sensitivity in use.
    public var requiredCells: Int
    /// Whether there is motion in the zone: enough cells changed on this frame and on the frames before it (see
    /// ``MotionDetector/Configuration/confirmFrames``).
    public var isMotion: Bool

    /// A zone's result from its parts.
    public init(zoneID: UInt16?, cells: Int, changedCells: Int, requiredCells: Int, isMotion: Bool) {
        self.zoneID = zoneID
        self.cells = cells
        self.changedCells = changedCells
        self.requiredCells = requiredCells
        self.isMotion = isMotion
    }
}

/// What the motion detector saw on one frame.
public struct MotionReport: Sendable, Hashable {
    /// The frame's time, ns.
    public var time: UInt64
    /// One entry per zone, in the zone list's order; one entry with a nil id for the whole picture when there
    /// are no zones. Empty for the first frame (it only starts the background).
    public var zones: [ZoneMotion]
    /// Cells of the whole grid that changed on this frame.
    public var changedCells: Int

    /// A report from its parts.
    public init(time: UInt64, zones: [ZoneMotion], changedCells: Int) {
        self.time = time
        self.zones = zones
        self.changedCells = changedCells
    }

    /// Whether any zone has motion.
    public var isMotion: Bool { zones.contains { $0.isMotion } }

    /// The ids of the zones with motion (`nil` stands for the whole picture).
    public var zonesWithMotion: [UInt16?] { zones.filter(\.isMotion).map(\.zoneID) }
}
