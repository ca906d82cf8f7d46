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
}

/// The codec the studio asks for.
public enum VideoCodecRequest: UInt8, Sendable, CaseIterable {
    /// The agent picks: BGRA on loopback, JPEG on any other link.
    case agentDecides = 0
    /// Raw BGRA.
    case bgra = 1
    /// JPEG.
    case jpeg = 2
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
    /// All bits defined by v1.
    public static let known: VideoFlags = [.repeat, .noSignal]
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
    /// Creates the counters.
    public init(framesSent: UInt64, framesDropped: UInt64, framesRepeated: UInt64, audioPackets: UInt64, rttNanos: UInt64) {
        self.framesSent = framesSent
        self.framesDropped = framesDropped
        self.framesRepeated = framesRepeated
        self.audioPackets = audioPackets
        self.rttNanos = rttNanos
    }
}

func checkVideoSize(width: UInt16, height: UInt16, field: String, code: WireErrorCode) throws(WireError) {
    guard (1...UInt16(WireLimits.maxVideoWidth)).contains(width), (1...UInt16(WireLimits.maxVideoHeight)).contains(height) else {
        throw WireError(code, "\(field) \(width)x\(height) is out of range; width and height must be 1...4096")
    }
}
