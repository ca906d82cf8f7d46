/// The model's `motionSensitivity`, 1 (low) ... 5 (medium) ... 10 (high), as the two numbers the motion detector
/// uses: how much a cell's luma must change, and how much of a zone must change.
///
/// | sensitivity | cell threshold (luma) | changed area (of the zone's cells) |
/// | --- | --- | --- |
/// | 1 | 30 | 6 % |
/// | 2 | 27 | 4.5 % |
/// | 3 | 24 | 3.2 % |
/// | 4 | 21 | 2.2 % |
/// | 5 | 18 | 1.5 % |
/// | 6 | 15 | 1 % |
/// | 7 | 13 | 0.7 % |
/// | 8 | 11 | 0.5 % |
/// | 9 | 9 | 0.35 % |
/// | 10 | 7 | 0.25 % |
///
/// and never fewer than ``minimumCells`` (2) cells, so one odd cell never fires. On the 64x36 grid (2,304 cells)
/// the whole picture needs 35 changed cells at 5 (1.5 %) and 6 at 10; a zone of a
/// quarter of the picture needs 9 at 5. A cell's luma is the mean of 36 or more pixels, so sensor noise (±6 per
/// pixel, a standard deviation near 2) moves it by well under 1, and even noise three times as strong by about
/// 1: 7 is several times that. The thresholds apply after the global brightness
/// change is removed (see ``MotionDetector``).
public struct MotionSensitivity: Sendable, Hashable, Codable, Comparable {
    /// 1...10.
    public let level: Int

    /// The fewest changed cells that count as motion in any zone.
    public static let minimumCells = 2
    /// The model's "low".
    public static let low = MotionSensitivity(1)
    /// The model's "medium", the default.
    public static let medium = MotionSensitivity(5)
    /// The model's "high".
    public static let high = MotionSensitivity(10)

    private static let cellThresholds: [Float] = [30, 27, 24, 21, 18, 15, 13, 11, 9, 7]
    private static let areaFractions: [Double] = [0.06, 0.045, 0.032, 0.022, 0.015, 0.010, 0.007, 0.005, 0.0035, 0.0025]

    /// `level` clamped to 1...10.
    public init(_ level: Int) {
        self.level = min(max(level, 1), 10)
    }

    /// The smallest luma change (0...255, of a cell's mean, after the global change is removed) that marks a cell
    /// as changed.
    public var cellThreshold: Float { Self.cellThresholds[level - 1] }

    /// The fraction of a zone's cells that must change for motion.
    public var areaFraction: Double { Self.areaFractions[level - 1] }

    /// How many of `cells` cells must change for motion: the area fraction rounded up, at least
    /// ``minimumCells``.
    public func requiredCells(of cells: Int) -> Int {
        max(Self.minimumCells, Int((Double(cells) * areaFraction).rounded(.up)))
    }

    public static func < (lhs: MotionSensitivity, rhs: MotionSensitivity) -> Bool { lhs.level < rhs.level }

    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(Int.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(level)
    }
}
