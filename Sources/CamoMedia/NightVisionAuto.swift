/// The `auto` setting of night vision: decides from the picture's brightness when the IR illumination (and the
/// camera's night mode) should be on. A plain value with no I/O: feed it the mean luma of each measured frame
/// (``meanLuma(_:step:)``) with its time, and it answers whether night vision should be on.
///
/// It flips only after the scene stayed on the other side of a threshold for a while, so a passing shadow or a
/// flash does not toggle the lights:
/// - off → on when every measurement for ``Configuration/onAfter`` (2 s) is below ``Configuration/onBelow`` (40);
/// - on → off when every measurement for ``Configuration/offAfter`` (5 s) is above ``Configuration/offAbove`` (90).
///
/// The gap between the thresholds is the hysteresis, and it is wide on purpose: the IR light raises the luma of
/// the very scene that turned it on, so only a clearly brighter scene (daylight, a lamp) may turn it off again.
/// A measurement on the wrong side, or in between, restarts the wait. So does a gap of more than
/// ``Configuration/maxGap`` (2 s) between measurements, or a time that goes backwards: the scene may have changed
/// unseen.
public struct NightVisionAuto: Sendable, Equatable {
    /// The thresholds and waits.
    public struct Configuration: Sendable, Equatable {
        /// Mean luma (0...255) below which the scene counts as dark.
        public var onBelow: Double
        /// How long the scene must stay dark before night vision turns on.
        public var onAfter: Duration
        /// Mean luma above which the scene counts as bright, with the IR light on.
        public var offAbove: Double
        /// How long the scene must stay bright before night vision turns off.
        public var offAfter: Duration
        /// The longest gap between two measurements that keeps a wait going.
        public var maxGap: Duration

        /// Creates a configuration; the defaults are 40 for 2 s to turn on, 90 for 5 s to turn off, gaps up to 2 s.
        public init(
            onBelow: Double = 40, onAfter: Duration = .seconds(2), offAbove: Double = 90, offAfter: Duration = .seconds(5),
            maxGap: Duration = .seconds(2)
        ) {
            self.onBelow = onBelow
            self.onAfter = onAfter
            self.offAbove = offAbove
            self.offAfter = offAfter
            self.maxGap = maxGap
        }
    }

    /// The thresholds and waits in use.
    public let configuration: Configuration
    /// Whether night vision should be on now.
    public private(set) var isOn: Bool
    /// When the current run of measurements favouring a flip began (nanoseconds), nil when there is none.
    public private(set) var pendingSince: UInt64?
    /// The time of the last measurement (nanoseconds), nil before the first.
    public private(set) var lastTime: UInt64?

    /// Starts in `isOn` (say, the state night vision was in when `auto` was chosen) with no measurement yet.
    public init(configuration: Configuration = Configuration(), isOn: Bool = false) {
        self.configuration = configuration
        self.isOn = isOn
    }

    /// Takes one measurement: `meanLuma` (0...255) of a frame captured at `time` (nanoseconds of a monotonic
    /// clock). Returns whether night vision should be on, which is also ``isOn``.
    @discardableResult
    public mutating func update(time: UInt64, meanLuma: Double) -> Bool {
        if let last = lastTime, time < last || time - last > Self.nanoseconds(configuration.maxGap) {
            pendingSince = nil
        }
        lastTime = time
        let favoursFlip = isOn ? meanLuma > configuration.offAbove : meanLuma < configuration.onBelow
        guard favoursFlip else {
            pendingSince = nil
            return isOn
        }
        let since = pendingSince ?? time
        pendingSince = since
        if time - since >= Self.nanoseconds(isOn ? configuration.offAfter : configuration.onAfter) {
            isOn.toggle()
            pendingSince = nil
        }
        return isOn
    }

    /// Forgets the measurements (after the camera restarted, say), keeping ``isOn``.
    public mutating func reset() {
        pendingSince = nil
        lastTime = nil
    }

    /// The mean BT.601 luma (0...255, `0.299 R + 0.587 G + 0.114 B`, full range) of a BGRA or RGBA frame, sampled on
    /// a grid: every `step` pixels across and down, starting half a step in (at 1920x1080 with step 8, 32,400
    /// samples). 0 for an empty frame. Samples that the frame's data does not hold are skipped.
    ///
    /// - Precondition: the frame is ``PixelFormat/bgra`` or ``PixelFormat/rgba``, and `step` is at least 1.
    public static func meanLuma(_ frame: VideoFrame, step: Int = 8) -> Double {
        precondition(step >= 1, "meanLuma: step \(step) must be at least 1")
        let redOffset: Int, blueOffset: Int
        switch frame.pixelFormat {
        case .bgra: (redOffset, blueOffset) = (2, 0)
        case .rgba: (redOffset, blueOffset) = (0, 2)
        default: preconditionFailure("meanLuma: \(frame.pixelFormat) frames are not supported (BGRA or RGBA only)")
        }
        let width = frame.width, height = frame.height, bytesPerRow = frame.bytesPerRow
        guard width > 0, height > 0, bytesPerRow >= 4 * width else { return 0 }
        return frame.data.withUnsafeBufferPointer { pixels -> Double in
            // Integer weights (per mille), summed exactly; one division at the end.
            var sum: UInt64 = 0
            var count: UInt64 = 0
            var y = step / 2
            while y < height {
                let row = y * bytesPerRow
                var x = step / 2
                while x < width {
                    let offset = row + 4 * x
                    guard offset + 3 < pixels.count else { break }
                    let red = UInt64(pixels[offset + redOffset])
                    let green = UInt64(pixels[offset + 1])
                    let blue = UInt64(pixels[offset + blueOffset])
                    sum &+= 299 * red + 587 * green + 114 * blue
                    count += 1
                    x += step
                }
                y += step
            }
            return count == 0 ? 0 : Double(sum) / Double(count) / 1000
        }
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }
}
