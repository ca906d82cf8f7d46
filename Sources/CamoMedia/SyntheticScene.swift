/// The synthetic scenes the event detectors are tested against (`--camera test:block`, `--camera test:steps`): one
/// still, textured picture (``SceneStill``) with one controlled change, at 30 fps. ``SceneRenderer`` draws them.
///
/// - ``block``: a dark block, 6 % of the picture's width and 20 % of its height, moves back and forth inside the left
///   quarter of the picture (a round trip every 4 s); nothing else changes. Motion belongs to a zone over the left
///   quarter and to no zone elsewhere.
/// - ``steps``: nothing moves; every colour channel of the whole picture steps by +40 or -40 every 3 s (levels 0,
///   +40, 0, -40, 0, ...), as an auto-exposure change does. None of it is motion.
public enum SyntheticScene: String, Sendable, CaseIterable {
    /// A dark block moving in the left quarter.
    case block
    /// Steps of the whole picture's brightness.
    case steps

    /// The block's width as a fraction of the picture's.
    public static let blockWidthFraction = 0.06
    /// The block's height as a fraction of the picture's.
    public static let blockHeightFraction = 0.2
    /// The block's top as a fraction of the picture's height.
    public static let blockTopFraction = 0.42
    /// Frames the block takes to go right across the left quarter and back (4 s).
    public static let blockRoundTripFrames: UInt64 = 120
    /// The block's grey level in every channel: dark, but not clipped black (above 5).
    public static let blockLevel: UInt8 = 24
    /// Frames between two brightness steps (3 s).
    public static let stepFrames: UInt64 = 90
    /// The size of a brightness step, added to every colour channel.
    public static let stepLevel = 40

    /// The block's pixels in frame `frameNumber`: columns `x` and rows `y`. Its left edge moves linearly from column 0
    /// to `width / 4 - blockWidth` in half a round trip and back, so the block always lies inside `0..<width / 4`.
    public static func blockRect(frameNumber: UInt64, size: VideoSize) -> (x: Range<Int>, y: Range<Int>) {
        let width = max(size.width, 1), height = max(size.height, 1)
        let blockWidth = max(1, Int((Double(width) * blockWidthFraction).rounded()))
        let blockHeight = max(1, Int((Double(height) * blockHeightFraction).rounded()))
        let travel = max(0, width / 4 - blockWidth)
        let half = blockRoundTripFrames / 2
        let phase = frameNumber % blockRoundTripFrames
        let along = phase <= half ? phase : blockRoundTripFrames - phase
        let left = Int(UInt64(travel) * along / half)
        let top = min(Int(Double(height) * blockTopFraction), height - blockHeight)
        return (left..<(left + blockWidth), top..<(top + blockHeight))
    }

    /// What ``steps`` adds to every colour channel in frame `frameNumber`: 0, +40, 0, -40, each for 3 s, over and
    /// over.
    public static func brightnessOffset(frameNumber: UInt64) -> Int {
        switch frameNumber / stepFrames % 4 {
        case 1: stepLevel
        case 3: -stepLevel
        default: 0
        }
    }
}
