import CamoMedia

/// One H.264 access unit out of an encoder.
public struct EncodedAccessUnit: Sendable {
    /// Annex B bytes; a keyframe carries SPS and PPS before its IDR slice, so a decoder can start there.
    public var data: [UInt8]
    /// Whether it is a keyframe (IDR).
    public var isKeyframe: Bool

    /// An access unit from its parts.
    public init(data: [UInt8], isKeyframe: Bool) {
        self.data = data
        self.isKeyframe = isKeyframe
    }
}

/// What the controller needs from an H.264 encoder. CamoAgentKit plugs in libavcodec's (CamoCodec); a library user
/// may plug in another. The controller's pacer owns each encoder and calls it from one task at a time.
public protocol H264Encoding: AnyObject {
    /// Encodes one BGRA frame at the encoder's size, as a keyframe when `forceKeyframe`; nil when the encoder
    /// produced nothing for it.
    func encode(_ frame: VideoFrame, forceKeyframe: Bool) throws -> EncodedAccessUnit?
    /// The target bitrate (bits per second) from the next frame on.
    func setBitrate(_ bitsPerSecond: Int)
}

/// What an encoder is asked to be.
public struct H264EncoderRequest: Sendable, Hashable {
    /// The picture size.
    public var size: VideoSize
    /// The first target bitrate, bits per second.
    public var bitrate: Int
    /// Frames from one keyframe to the next (the GOP).
    public var gopFrames: Int
}

/// H.264 for studios on the network: the encoder, the keyframe rhythm and the rate control's bounds.
///
/// With options set, the agent offers `h264` (capability bit 5) and sends it to a 1.1 studio that decodes it and
/// left the codec to the agent on a network link, or asked for it. Without options (nil in
/// ``ControllerConfiguration/h264``) the agent offers bgra and jpeg only, as in 1.0.
public struct H264Options: Sendable {
    /// Makes an encoder for a rendition (size and first bitrate); thrown errors are logged and the rendition's
    /// studios get nothing until the next try (one per second).
    public var makeEncoder: @Sendable (H264EncoderRequest) throws -> any H264Encoding
    /// The encoder's name for logs and status (`x264`, `v4l2m2m`, ...).
    public var encoderName: String
    /// Seconds from one keyframe to the next (default 2).
    public var gopSeconds: Double = 2
    /// A studio's keyframe request is served at most this often per rendition (default 500 ms).
    public var keyframeRequestIntervalNanos: UInt64 = 500_000_000
    /// The rate control's floor, ceiling and first rate at 1280x720 (other sizes scale them by pixel count, within
    /// 1/8 and 4 times), and its latency budget. Default 0.5 and 6 Mb/s, first 2 Mb/s, 200 ms.
    public var rate = LinkRateConfiguration()
    /// At most this many H.264 encoders per picture size (default 2): studios whose links differ widely are put
    /// on the rendition their link sustains (see ``RenditionPlanner``).
    public var maxRenditionsPerSize: Int = 2

    /// Options with an encoder factory and the defaults above.
    public init(encoderName: String, makeEncoder: @escaping @Sendable (H264EncoderRequest) throws -> any H264Encoding) {
        self.encoderName = encoderName
        self.makeEncoder = makeEncoder
    }

    /// The rate configuration for `size`: ``rate`` scaled by the pixel count against 1280x720.
    func rateConfiguration(for size: VideoSize) -> LinkRateConfiguration {
        let scale = min(4, max(0.125, Double(size.width * size.height) / Double(1280 * 720)))
        func scaled(_ value: Int) -> Int { Int((Double(value) * scale).rounded()) }
        return LinkRateConfiguration(
            floor: scaled(rate.floor), ceiling: scaled(rate.ceiling), start: scaled(rate.start),
            latencyBudgetNanos: rate.latencyBudgetNanos)
    }

    /// The GOP in frames at 30 fps (at least 1).
    var gopFrames: Int { max(1, Int((gopSeconds * 30).rounded())) }
}

/// When a rendition's next frame must be a keyframe: the first frame, every GOP, and a request (a new studio,
/// a studio's `keyframeRequest`, a studio that lost frames) at most once per interval. A plain value.
struct KeyframePolicy: Sendable {
    let gopFrames: Int
    let requestIntervalNanos: UInt64
    private var framesSinceKeyframe: Int?
    private var lastRequestServedAt: UInt64?
    /// A request waits here until the interval allows it.
    private var pendingRequest = false

    init(gopFrames: Int, requestIntervalNanos: UInt64) {
        self.gopFrames = max(1, gopFrames)
        self.requestIntervalNanos = requestIntervalNanos
    }

    /// Notes a request (it is served by a later ``decide(now:)`` once the interval allows).
    mutating func request() { pendingRequest = true }

    /// Whether the frame about to be encoded at `now` must be a keyframe.
    mutating func decide(now: UInt64) -> Bool {
        guard let since = framesSinceKeyframe else { return true }
        if since + 1 >= gopFrames { return true }
        if pendingRequest {
            if let last = lastRequestServedAt, now >= last, now - last < requestIntervalNanos { return false }
            return true
        }
        return false
    }

    /// The encoder produced a frame (keyframe or not) at `now`; `forced` says whether it was asked for one.
    mutating func encoded(isKeyframe: Bool, forced: Bool, now: UInt64) {
        if isKeyframe {
            framesSinceKeyframe = 0
            if pendingRequest || forced {
                if pendingRequest { lastRequestServedAt = now }
                pendingRequest = false
            }
        } else {
            framesSinceKeyframe = (framesSinceKeyframe ?? 0) + 1
        }
    }
}
