/// The logical channels of the transport phase. Each channel reassembles its own messages.
public enum WireChannel: UInt8, Sendable, CaseIterable {
    /// Everything except video and audio.
    case control = 0
    /// `video` messages.
    case video = 1
    /// `audio` messages.
    case audio = 2
}

/// The codec of a video message or of the agent's choice in `agentHello`.
public enum VideoCodec: UInt8, Sendable, CaseIterable {
    /// Raw BGRA rows (loopback, USB).
    case bgra = 1
    /// One baseline JPEG per frame (any other link).
    case jpeg = 2
    /// One H.264 access unit per frame, Annex B (protocol 1.1; only to a studio whose hello says it decodes H.264).
    case h264 = 3
}

/// The codec the studio asks for.
public enum VideoCodecRequest: UInt8, Sendable, CaseIterable {
    /// The agent picks: BGRA on loopback, JPEG on any other link.
    case agentDecides = 0
    /// Raw BGRA.
    case bgra = 1
    /// JPEG.
    case jpeg = 2
    /// H.264 (protocol 1.1).
    case h264 = 3
}

/// The codecs a studio can decode (`studioHello.decodes`, u8, protocol 1.1). A 1.0 studio decodes bgra and jpeg.
public struct StudioDecodes: OptionSet, Sendable, Hashable {
    /// The raw bit field.
    public var rawValue: UInt8
    /// Creates the set from its bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Bit 0: raw BGRA.
    public static let bgra = StudioDecodes(rawValue: 1 << 0)
    /// Bit 1: JPEG.
    public static let jpeg = StudioDecodes(rawValue: 1 << 1)
    /// Bit 2: H.264 (Annex B, constrained baseline to high profile).
    public static let h264 = StudioDecodes(rawValue: 1 << 2)
    /// What a 1.0 studio decodes.
    public static let version1_0: StudioDecodes = [.bgra, .jpeg]

    /// Whether the set holds `codec`.
    public func decodes(_ codec: VideoCodec) -> Bool {
        switch codec {
        case .bgra: contains(StudioDecodes.bgra)
        case .jpeg: contains(StudioDecodes.jpeg)
        case .h264: contains(StudioDecodes.h264)
        }
    }
}

/// The sample format of audio messages (`audio.format`).
public enum AudioSampleFormat: UInt8, Sendable, CaseIterable {
    /// 32-bit IEEE float, little-endian, interleaved (1.0).
    case float32 = 1
    /// 16-bit signed integer, little-endian, interleaved (protocol 1.1): half the bytes, for links that need them.
    case s16 = 2

    /// Bytes per sample (one channel).
    public var bytesPerSample: Int { self == .float32 ? 4 : 2 }
}

/// The audio format a studio asks for (`studioHello.audioFormat`, u8, protocol 1.1).
public enum AudioFormatRequest: UInt8, Sendable, CaseIterable {
    /// The agent picks: float32 on loopback and USB, s16 on any other link.
    case agentDecides = 0
    /// Always float32.
    case float32 = 1
    /// Always s16.
    case s16 = 2
}

/// What an agent can do (`agentHello.capabilities`, u32). Unknown bits are ignored by v1 receivers.
public struct AgentCapabilities: OptionSet, Sendable, Hashable {
    /// The raw bit field.
    public var rawValue: UInt32
    /// Creates the set from its bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Bit 0: can send raw BGRA.
    public static let bgra = AgentCapabilities(rawValue: 1 << 0)
    /// Bit 1: can send JPEG.
    public static let jpeg = AgentCapabilities(rawValue: 1 << 1)
    /// Bit 2: honours `pauseRequest`.
    public static let pause = AgentCapabilities(rawValue: 1 << 2)
    /// Bit 3: sends audio.
    public static let audio = AgentCapabilities(rawValue: 1 << 3)
    /// Bit 4: sends and answers pings.
    public static let keepalive = AgentCapabilities(rawValue: 1 << 4)
    /// Bit 5 (1.1): can send H.264.
    public static let h264 = AgentCapabilities(rawValue: 1 << 5)
    /// Bit 6 (1.1): steers its bitrate by `receiverReport` and answers `keyframeRequest`.
    public static let adaptive = AgentCapabilities(rawValue: 1 << 6)
    /// Bit 7 (1.2): answers `settingsRequest` and `settingsWrite` and sends `settings` on every change.
    public static let settings = AgentCapabilities(rawValue: 1 << 7)
    /// Bit 8 (1.3): runs event detectors, and sends `eventNotice` to a studio that sent `eventsRequest`.
    public static let events = AgentCapabilities(rawValue: 1 << 8)
    /// Bit 9 (1.4): keeps recordings, and lists and sends them to a paired studio (`clipListRequest`, `clipFetch`).
    public static let clips = AgentCapabilities(rawValue: 1 << 9)
    /// Everything a v1.0 agent with camera and microphone offers.
    public static let all: AgentCapabilities = [.bgra, .jpeg, .pause, .audio, .keepalive]
}

/// Flags of a video message (u8). Other bits must be 0.
public struct VideoFlags: OptionSet, Sendable, Hashable {
    /// The raw bits.
    public var rawValue: UInt8
    /// Creates the set from its bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Bit 0: the pacer repeated the previous frame (no new camera frame arrived for this slot).
    public static let `repeat` = VideoFlags(rawValue: 1 << 0)
    /// Bit 1: no camera signal; the picture is a placeholder.
    public static let noSignal = VideoFlags(rawValue: 1 << 1)
    /// Bit 2 (1.1, h264 only): the access unit is a keyframe (an IDR with SPS and PPS before it): a decoder can start here.
    public static let keyframe = VideoFlags(rawValue: 1 << 2)
    /// Bit 3 (1.1, h264 and jpeg): the slot had a new frame, but the agent skipped it before its encoder to keep the
    /// latency within budget on a slow link; no data, the studio shows its last picture again and counts it.
    public static let skipped = VideoFlags(rawValue: 1 << 3)
    /// All bits defined by 1.1.
    public static let known: VideoFlags = [.repeat, .noSignal, .keyframe, .skipped]
}

/// The agent's stream state (`streamState`, u8).
public enum StreamState: UInt8, Sendable, CaseIterable {
    /// Frames and audio flow.
    case streaming = 0
    /// The agent paused (e.g. its operator).
    case pausedByAgent = 1
    /// Paused because this studio sent `pauseRequest(true)`.
    case pausedByStudio = 2
    /// The camera went away; video stops until it returns.
    case cameraLost = 3
}

/// A video request (`setVideo`, and the preferences in `studioHello`).
public struct VideoRequest: Sendable, Equatable {
    /// Wanted width, 1...4096.
    public var width: UInt16
    /// Wanted height, 1...4096.
    public var height: UInt16
    /// Wanted codec.
    public var codec: VideoCodecRequest
    /// JPEG quality 1...100, or 0 for the agent's default.
    public var jpegQuality: UInt8

    /// Creates a request.
    public init(width: UInt16, height: UInt16, codec: VideoCodecRequest, jpegQuality: UInt8) {
        self.width = width
        self.height = height
        self.codec = codec
        self.jpegQuality = jpegQuality
    }
}

/// `ping` (both directions).
public struct Ping: Sendable, Equatable {
    /// Increments by one per ping from this sender.
    public var sequence: UInt32
    /// The sender's monotonic clock (ns) when it sent the ping.
    public var sentAt: UInt64
    /// Creates a ping.
    public init(sequence: UInt32, sentAt: UInt64) {
        self.sequence = sequence
        self.sentAt = sentAt
    }
}

/// `pong` (both directions): the answer to a ping.
public struct Pong: Sendable, Equatable {
    /// The ping's sequence.
    public var sequence: UInt32
    /// The ping's `sentAt`, unchanged (the pinger computes RTT = now − echoedSentAt).
    public var echoedSentAt: UInt64
    /// The responder's monotonic clock (ns) when the ping arrived.
    public var receivedAt: UInt64
    /// Creates a pong.
    public init(sequence: UInt32, echoedSentAt: UInt64, receivedAt: UInt64) {
        self.sequence = sequence
        self.echoedSentAt = echoedSentAt
        self.receivedAt = receivedAt
    }
}

/// `stats` (agent → studio): per-session counters.
public struct SessionStats: Sendable, Equatable {
    /// Video messages sent.
    public var framesSent: UInt64
    /// Pacer slots skipped for this session (backlog).
    public var framesDropped: UInt64
    /// Frames sent with the repeat flag.
    public var framesRepeated: UInt64
    /// Audio messages sent.
    public var audioPackets: UInt64
    /// The agent's last measured round-trip time in ns (0 = unknown).
    public var rttNanos: UInt64
    /// 1.1, sent only to a 1.1 studio: the rate control's figures (nil: a 1.0 message).
    public var rate: RateStats?
    /// Creates the counters.
    public init(
        framesSent: UInt64, framesDropped: UInt64, framesRepeated: UInt64, audioPackets: UInt64, rttNanos: UInt64,
        rate: RateStats? = nil
    ) {
        self.framesSent = framesSent
        self.framesDropped = framesDropped
        self.framesRepeated = framesRepeated
        self.audioPackets = audioPackets
        self.rttNanos = rttNanos
        self.rate = rate
    }
}

/// The rate control's figures in `stats` (protocol 1.1).
public struct RateStats: Sendable, Equatable {
    /// Frames skipped before the encoder to keep the latency budget (never after it).
    public var framesSkipped: UInt64
    /// The encoder's target bitrate for this session's rendition, bits per second (0: not rate controlled).
    public var targetBitrate: UInt32
    /// The agent's latest queue-delay estimate in microseconds (capture to the studio's receipt, above the base).
    public var queueDelayMicros: UInt32
    /// Creates the figures.
    public init(framesSkipped: UInt64, targetBitrate: UInt32, queueDelayMicros: UInt32) {
        self.framesSkipped = framesSkipped
        self.targetBitrate = targetBitrate
        self.queueDelayMicros = queueDelayMicros
    }
}

/// Why a studio asks for a keyframe (`keyframeRequest.reason`, u8).
public enum KeyframeReason: UInt8, Sendable, CaseIterable {
    /// Frames went missing (a gap in `video.sequence` the studio cannot decode across).
    case gap = 1
    /// The decoder reported an error or a damaged picture.
    case decoderError = 2
    /// The studio has no picture yet (joined, or reset its decoder).
    case start = 3
}

/// One video frame the studio finished receiving, in a `receiverReport`.
public struct ReceivedFrameReport: Sendable, Equatable {
    /// The frame's `video.sequence`.
    public var sequence: UInt32
    /// The frame's `video.captureTime` (agent clock).
    public var captureTime: UInt64
    /// When its last byte arrived, on the studio's monotonic clock (ns).
    public var receivedAt: UInt64
    /// Its message length in bytes.
    public var bytes: UInt32
    /// Creates a sample.
    public init(sequence: UInt32, captureTime: UInt64, receivedAt: UInt64, bytes: UInt32) {
        self.sequence = sequence
        self.captureTime = captureTime
        self.receivedAt = receivedAt
        self.bytes = bytes
    }
}

/// `receiverReport` (0x0C, studio → agent, protocol 1.1): what arrived since the last report, for the agent's
/// rate control.
public struct ReceiverReport: Sendable, Equatable {
    /// The most frames one report lists.
    public static let maxFrames = 64
    /// Increments by one per report.
    public var sequence: UInt32
    /// The studio-clock nanoseconds this report covers (since the previous one).
    public var intervalNanos: UInt64
    /// Every byte of every record received in the interval (video, audio, control).
    public var bytesReceived: UInt64
    /// Video slots missing in the interval (gaps in `video.sequence`).
    public var framesLost: UInt32
    /// The video frames completed in the interval, oldest first (at most ``maxFrames``; the newest kept).
    public var frames: [ReceivedFrameReport]
    /// Creates a report.
    public init(sequence: UInt32, intervalNanos: UInt64, bytesReceived: UInt64, framesLost: UInt32, frames: [ReceivedFrameReport]) {
        self.sequence = sequence
        self.intervalNanos = intervalNanos
        self.bytesReceived = bytesReceived
        self.framesLost = framesLost
        self.frames = frames
    }
}

func checkVideoSize(width: UInt16, height: UInt16, field: String, code: WireErrorCode) throws(WireError) {
    guard (1...UInt16(WireLimits.maxVideoWidth)).contains(width), (1...UInt16(WireLimits.maxVideoHeight)).contains(height) else {
        throw WireError(code, "\(field) \(width)x\(height) is out of range; width and height must be 1...4096")
    }
}
