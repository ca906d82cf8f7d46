import CamoMedia

/// A ratio of two positive integers; a V4L2 frame interval is seconds per frame (`1/30`).
public struct Fraction: Sendable, Hashable, CustomStringConvertible {
    /// The numerator.
    public var numerator: Int
    /// The denominator.
    public var denominator: Int

    /// Creates `numerator/denominator`.
    public init(_ numerator: Int, _ denominator: Int) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// The value as a Double (0 when the denominator is 0).
    public var value: Double { denominator == 0 ? 0 : Double(numerator) / Double(denominator) }

    /// Frames per second of a frame interval.
    public var framesPerSecond: Double { numerator == 0 ? 0 : Double(denominator) / Double(numerator) }

    public var description: String { "\(numerator)/\(denominator)" }
}

/// Frame intervals a camera offers at one size.
public enum CameraFrameInterval: Sendable, Hashable {
    /// One interval, e.g. 1/30 s.
    case discrete(Fraction)
    /// Any interval between `min` (fastest) and `max` (slowest).
    case range(min: Fraction, max: Fraction)
}

/// Frame sizes a camera offers for one format.
public enum CameraFrameSize: Sendable, Hashable {
    /// A range of sizes (stepwise or continuous).
    public struct Stepwise: Sendable, Hashable {
        /// Narrowest width.
        public var minWidth: Int
        /// Widest width.
        public var maxWidth: Int
        /// Width step.
        public var stepWidth: Int
        /// Lowest height.
        public var minHeight: Int
        /// Highest height.
        public var maxHeight: Int
        /// Height step.
        public var stepHeight: Int

        /// Creates a size range.
        public init(minWidth: Int, maxWidth: Int, stepWidth: Int, minHeight: Int, maxHeight: Int, stepHeight: Int) {
            self.minWidth = minWidth
            self.maxWidth = maxWidth
            self.stepWidth = stepWidth
            self.minHeight = minHeight
            self.maxHeight = maxHeight
            self.stepHeight = stepHeight
        }

        /// The size in range nearest to `size`, on the steps.
        public func nearest(to size: VideoSize) -> VideoSize {
            func fit(_ value: Int, _ low: Int, _ high: Int, _ step: Int) -> Int {
                let clamped = min(max(value, low), high)
                return low + (clamped - low) / max(step, 1) * max(step, 1)
            }
            return VideoSize(
                width: fit(size.width, minWidth, maxWidth, stepWidth), height: fit(size.height, minHeight, maxHeight, stepHeight))
        }
    }

    /// One size with the intervals offered at it (empty when the driver does not enumerate them).
    case discrete(width: Int, height: Int, intervals: [CameraFrameInterval])
    /// A range of sizes; intervals are asked for per size.
    case stepwise(Stepwise)
}

/// One pixel format a camera offers, with its sizes and rates.
public struct CameraFormat: Sendable, Hashable {
    /// The format code.
    public var fourcc: FourCC
    /// The driver's description, e.g. "YUYV 4:2:2".
    public var name: String
    /// A compressed format (MJPEG, H.264, ...).
    public var isCompressed: Bool
    /// The sizes offered.
    public var sizes: [CameraFrameSize]

    /// Creates a format description.
    public init(fourcc: FourCC, name: String, isCompressed: Bool, sizes: [CameraFrameSize]) {
        self.fourcc = fourcc
        self.name = name
        self.isCompressed = isCompressed
        self.sizes = sizes
    }
}

/// A format, size and frame interval to capture at.
public struct CameraMode: Sendable, Hashable, CustomStringConvertible {
    /// The pixel format.
    public var fourcc: FourCC
    /// The frame size.
    public var size: VideoSize
    /// The frame interval to ask for; nil when the driver does not let us choose (it decides, e.g. from DV timings).
    public var interval: Fraction?
    /// The expected rate: from `interval`, or the driver's current rate when `interval` is nil.
    public var framesPerSecond: Double

    /// Creates a mode.
    public init(fourcc: FourCC, size: VideoSize, interval: Fraction?, framesPerSecond: Double) {
        self.fourcc = fourcc
        self.size = size
        self.interval = interval
        self.framesPerSecond = framesPerSecond
    }

    public var description: String {
        let rate = (framesPerSecond * 100).rounded() / 100
        return "\(fourcc) \(size) at \(rate == rate.rounded() ? String(Int(rate)) : String(rate)) fps"
    }
}

/// What the agent would like from the camera.
public struct CameraModeRequest: Sendable, Hashable {
    /// The size the studios want (the largest of them).
    public var size: VideoSize
    /// The rate to reach (30 for the Camo contract; `--camera-fps` changes it).
    public var framesPerSecond: Double
    /// A format the user insisted on (`--camera-format`), or nil to choose.
    public var format: FourCC?

    /// Creates a request.
    public init(size: VideoSize, framesPerSecond: Double = Double(MediaContract.fps), format: FourCC? = nil) {
        self.size = size
        self.framesPerSecond = framesPerSecond
        self.format = format
    }
}

/// The chosen mode and why, in words for the log.
public struct CameraModeChoice: Sendable, Hashable {
    /// The mode to set.
    public var mode: CameraMode
    /// Why this one: which rule decided.
    public var reason: String
    /// True when the mode reaches the requested rate at (at least) the requested size.
    public var meetsRequest: Bool
}

/// Picks a capture mode. A plain function of the camera's offer, tested without a device.
///
/// Rules, in order:
/// 1. A mode that reaches the requested rate (30 fps) at the requested size or larger beats everything else.
///    Among those: formats that convert cheaply (YUYV, NV12, UYVY, I420 and the other plain YUV layouts) beat
///    MJPEG, which beats the rest; then the smallest such size (least scaling and bus bandwidth); then the
///    slowest rate that still reaches the target (30 before 60: nothing decimated, less USB bandwidth).
/// 2. When no mode does, the fastest: the highest rate up to the target (and up to the studio's 30 fps, since
///    faster buys nothing), then the largest size up to the requested one (a 640x360 at 30 fps scaled up beats
///    1280x720 at 12.5 fps), then the highest rate up to the target, then the same format classes.
///    The reason says that the target was not reached.
public enum CameraModeChooser {
    /// Cheap-to-convert formats, best first.
    public static let cheapFormats: [FourCC] = [.yuyv, .nv12, .uyvy, .yu12, .yv12, .nv21, .yvyu, .vyuy, .nv12m, .nv21m, .yu12m, .nv16, .nv61]

    /// 0 = cheap YUV, 1 = MJPEG, 2 = anything else.
    public static func formatClass(_ fourcc: FourCC) -> Int {
        if cheapFormats.contains(fourcc) { return 0 }
        if fourcc == .mjpeg || fourcc == .jpeg { return 1 }
        return 2
    }

    private static func formatRank(_ fourcc: FourCC) -> Int {
        cheapFormats.firstIndex(of: fourcc) ?? cheapFormats.count
    }

    /// Every mode the offer contains. Stepwise sizes contribute the requested size (fitted to the steps);
    /// sizes without enumerated intervals use `currentRate` (the driver's G_PARM rate) as their rate.
    public static func candidates(
        formats: [CameraFormat], request: CameraModeRequest, currentRate: Double?,
        intervalsForSize: (FourCC, VideoSize) -> [CameraFrameInterval] = { _, _ in [] }
    ) -> [CameraMode] {
        var modes: [CameraMode] = []
        let target = request.framesPerSecond
        func add(_ fourcc: FourCC, _ size: VideoSize, _ intervals: [CameraFrameInterval]) {
            if intervals.isEmpty {
                modes.append(CameraMode(fourcc: fourcc, size: size, interval: nil, framesPerSecond: currentRate ?? target))
            }
            for interval in intervals {
                switch interval {
                case .discrete(let fraction):
                    modes.append(CameraMode(fourcc: fourcc, size: size, interval: fraction, framesPerSecond: fraction.framesPerSecond))
                case .range(let fastest, let slowest):
                    // Ask for the target rate when the range holds it, else the nearer end.
                    let wanted = Fraction(1000, Int((target * 1000).rounded()))
                    let chosen: Fraction
                    if wanted.value < fastest.value {
                        chosen = fastest
                    } else if wanted.value > slowest.value {
                        chosen = slowest
                    } else {
                        chosen = wanted
                    }
                    modes.append(CameraMode(fourcc: fourcc, size: size, interval: chosen, framesPerSecond: chosen.framesPerSecond))
                }
            }
        }
        for format in formats {
            for size in format.sizes {
                switch size {
                case .discrete(let width, let height, let intervals):
                    add(format.fourcc, VideoSize(width: width, height: height), intervals)
                case .stepwise(let range):
                    let fitted = range.nearest(to: request.size)
                    add(format.fourcc, fitted, intervalsForSize(format.fourcc, fitted))
                }
            }
        }
        return modes
    }

    /// Chooses among `modes` of formats that `canConvert` accepts (and only `request.format` when set).
    /// - Throws: ``CameraError/formatNotOffered(path:format:offered:)`` or ``CameraError/noConvertibleFormat(path:offered:)``.
    public static func choose(
        _ modes: [CameraMode], request: CameraModeRequest, path: String, canConvert: (FourCC) -> Bool
    ) throws(CameraError) -> CameraModeChoice {
        let offered = Array(Set(modes.map(\.fourcc.description))).sorted()
        var usable = modes.filter { canConvert($0.fourcc) && $0.framesPerSecond > 0 }
        if let forced = request.format {
            guard modes.contains(where: { $0.fourcc == forced }) else {
                throw .formatNotOffered(path: path, format: forced.description, offered: offered)
            }
            usable = usable.filter { $0.fourcc == forced }
            guard !usable.isEmpty else {
                throw .noConvertibleFormat(path: path, offered: [forced.description])
            }
        }
        guard !usable.isEmpty else { throw .noConvertibleFormat(path: path, offered: offered) }
        let target = request.framesPerSecond
        let wanted = request.size
        let tolerance = 0.01
        let meeting = usable.filter {
            $0.framesPerSecond + tolerance >= target && $0.size.width >= wanted.width && $0.size.height >= wanted.height
        }
        if let best = meeting.min(by: { a, b in
            let ka = (formatClass(a.fourcc), a.size.width * a.size.height, a.framesPerSecond, formatRank(a.fourcc))
            let kb = (formatClass(b.fourcc), b.size.width * b.size.height, b.framesPerSecond, formatRank(b.fourcc))
            return ka < kb
        }) {
            let kind = ["a cheap YUV format", "MJPEG", "the best format offered"][formatClass(best.fourcc)]
            return CameraModeChoice(
                mode: best,
                reason: "\(best) reaches \(formatRate(target)) fps at \(wanted) or larger, in \(kind)",
                meetsRequest: true)
        }
        let wantedArea = wanted.width * wanted.height
        // Safe: usable is not empty.
        // Rates above the studio's 30 fps buy nothing, so they do not outweigh size.
        let useful = min(target, Double(MediaContract.fps))
        let best = usable.min(by: { a, b in
            let ra = min(a.framesPerSecond, useful), rb = min(b.framesPerSecond, useful)
            if abs(ra - rb) > tolerance { return ra > rb }
            let aa = min(a.size.width * a.size.height, wantedArea), ab = min(b.size.width * b.size.height, wantedArea)
            if aa != ab { return aa > ab }
            let fa = min(a.framesPerSecond, target), fb = min(b.framesPerSecond, target)
            if abs(fa - fb) > tolerance { return fa > fb }
            let ka = (formatClass(a.fourcc), a.size.width * a.size.height, a.framesPerSecond, formatRank(a.fourcc))
            let kb = (formatClass(b.fourcc), b.size.width * b.size.height, b.framesPerSecond, formatRank(b.fourcc))
            return ka < kb
        })!
        let fastestAtSize = usable
            .filter { $0.size.width >= wanted.width && $0.size.height >= wanted.height }
            .map(\.framesPerSecond).max()
        let why = fastestAtSize.map { "the fastest mode at \(wanted) or larger gives \(formatRate($0)) fps" }
            ?? "the camera has no mode at \(wanted) or larger"
        return CameraModeChoice(
            mode: best,
            reason: "no mode reaches \(formatRate(target)) fps at \(wanted) or larger (\(why)); taking the fastest, \(best)"
                + (best.size != wanted ? ", scaled to \(wanted) for the studio" : ""),
            meetsRequest: false)
    }

    private static func formatRate(_ rate: Double) -> String {
        let rounded = (rate * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
