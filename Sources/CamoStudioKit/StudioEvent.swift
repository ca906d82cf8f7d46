import CamoWire
import CamoMedia

/// The video codec an agent sends.
public enum StudioVideoCodec: String, Sendable, Equatable, CustomStringConvertible {
    /// Raw BGRA rows.
    case bgra
    /// One JPEG per frame.
    case jpeg
    /// H.264, decoded with libavcodec.
    case h264

    /// The codec's name: `bgra` or `jpeg`.
    public var description: String { rawValue }
}

/// One video frame as the studio received it, decoded to BGRA.
public struct ReceivedVideoFrame: Sendable {
    /// The agent's pacer slot index; gaps mean frames dropped for this session.
    public var sequence: UInt32
    /// The pacer slot time (agent monotonic ns; even 1/30 s steps).
    public var slotTime: UInt64
    /// When the camera captured the picture (agent monotonic ns).
    public var captureTime: UInt64
    /// The agent repeated the previous frame because no new one arrived for this slot.
    public var isRepeat: Bool
    /// The agent has no picture (camera lost); the frame is filler.
    public var noSignal: Bool
    /// How the frame travelled.
    public var codec: StudioVideoCodec
    /// Bytes of the frame on the wire (JPEG size, or BGRA buffer size).
    public var encodedByteCount: Int
    /// The picture: BGRA, `bytesPerRow ≥ 4·width` (a BGRA frame keeps the agent's stride).
    public var frame: VideoFrame
    /// When the message's last byte arrived, on the studio's clock (ns; 0: unknown).
    public var receivedAt: UInt64 = 0
    /// When decoding finished, on the studio's clock (ns; 0: unknown).
    public var decodedAt: UInt64 = 0
    /// H.264: the frame was a keyframe.
    public var isKeyframe = false
    /// H.264: the agent skipped this slot's frame before its encoder (the picture is the last one again).
    public var isSkipped = false
    /// H.264: the access unit as received (Annex B), for writing it into an MP4 as-is; empty otherwise.
    public var accessUnit: [UInt8] = []

    /// A received frame from its parts.
    public init(sequence: UInt32, slotTime: UInt64, captureTime: UInt64, isRepeat: Bool, noSignal: Bool,
                codec: StudioVideoCodec, encodedByteCount: Int, frame: VideoFrame) {
        self.sequence = sequence
        self.slotTime = slotTime
        self.captureTime = captureTime
        self.isRepeat = isRepeat
        self.noSignal = noSignal
        self.codec = codec
        self.encodedByteCount = encodedByteCount
        self.frame = frame
    }

    /// A received BGRA frame from raw rows (for tools and tests that do not build a `VideoFrame`).
    public init(sequence: UInt32, slotTime: UInt64, captureTime: UInt64, isRepeat: Bool = false,
                width: Int, height: Int, bytesPerRow: Int, bgra: [UInt8]) {
        self.init(sequence: sequence, slotTime: slotTime, captureTime: captureTime, isRepeat: isRepeat, noSignal: false,
                  codec: .bgra, encodedByteCount: bgra.count,
                  frame: VideoFrame(width: width, height: height, bytesPerRow: bytesPerRow, data: bgra, captureTime: captureTime))
    }
}

/// One audio packet: exactly the requested number of 48 kHz stereo float32 sample frames.
public struct ReceivedAudioPacket: Sendable, Equatable {
    /// The packet's sequence number.
    public var sequence: UInt32
    /// Time of the first sample frame (agent monotonic ns).
    public var firstSampleTime: UInt64
    /// Sample frames in the packet.
    public var sampleFrames: Int
    /// Interleaved little-endian float32 samples, `sampleFrames · 2 · 4` bytes, as received.
    public var data: [UInt8]

    /// A packet from its parts.
    public init(sequence: UInt32, firstSampleTime: UInt64, sampleFrames: Int, data: [UInt8]) {
        self.sequence = sequence
        self.firstSampleTime = firstSampleTime
        self.sampleFrames = sampleFrames
        self.data = data
    }

    /// The samples, interleaved left/right.
    public var samples: [Float] { AVSyncAnalyzer.floats(fromLittleEndian: data) }
}

/// What the agent says about its stream (the wire's `streamState`).
public typealias AgentStreamState = StreamState

/// The agent's counters for this session (the wire's `stats`).
public typealias AgentStats = SessionStats

/// Why a session ended.
public enum StudioCloseReason: Sendable, Equatable, CustomStringConvertible {
    /// This studio closed it (``StudioClient/close(reason:)``).
    case requested
    /// The agent said goodbye (an orderly close it asked for).
    case agentGoodbye(code: UInt16, reason: String)
    /// The agent sent an error and closed.
    case agentError(code: UInt16, reason: String)
    /// Nothing arrived from the agent for the keepalive timeout.
    case keepaliveTimeout
    /// The agent broke the protocol (code and reason as sent to it).
    case protocolError(code: UInt16, reason: String)
    /// The TCP connection ended without a goodbye, or failed.
    case connectionLost(String)

    /// True for anything but a close this studio asked for or an agent's goodbye.
    public var isError: Bool {
        switch self {
        case .requested, .agentGoodbye: false
        default: true
        }
    }

    /// A human sentence.
    public var description: String {
        switch self {
        case .requested: "closed by the studio"
        case .agentGoodbye(let code, let reason): "agent said goodbye: \(reason) (code \(code))"
        case .agentError(let code, let reason): "agent closed the session: \(reason) (code \(code))"
        case .keepaliveTimeout: "nothing received from the agent for too long (keepalive timeout)"
        case .protocolError(let code, let reason): "protocol error: \(reason) (code \(code))"
        case .connectionLost(let why): "connection lost: \(why)"
        }
    }
}

/// What a ``StudioClient`` delivers, in arrival order. ``closed(_:)`` is always the last event.
public enum StudioEvent: Sendable {
    /// A video frame, decoded to BGRA.
    case video(ReceivedVideoFrame)
    /// An audio packet.
    case audio(ReceivedAudioPacket)
    /// The agent's stream state changed.
    case streamState(AgentStreamState)
    /// The agent's counters.
    case stats(AgentStats)
    /// A keepalive round trip completed (ns, measured on this host's monotonic clock).
    case roundTrip(nanoseconds: UInt64)
    /// A clock sample from a round trip: the agent's clock minus this studio's (ns; NTP-style, exact to half the
    /// round trip's asymmetry) and the round trip it came from. The smallest round trip gives the best offset.
    case clockSample(offsetNanos: Int64, roundTripNanos: UInt64)
    /// This studio asked the agent for a keyframe (H.264: no picture yet, lost frames, or a decoder error).
    case keyframeRequested(KeyframeReason)
    /// The agent's settings model (the answer to ``StudioClient/requestSettings()``), or the settings that changed
    /// (anyone's change, at once; protocol 1.2).
    case settings(SettingsSnapshot)
    /// What a ``StudioClient/writeSettings(_:requestId:)`` applied and refused (protocol 1.2).
    case settingsResult(SettingsResult)
    /// A change of one of the camera's events (motion, sound, an alarm, the doorbell), after
    /// ``StudioClient/requestEvents(replay:)`` (protocol 1.3).
    case cameraEvent(WireEvent)
    /// A page of the agent's recordings, after ``StudioClient/requestClipList(before:)`` (protocol 1.4).
    case clipList(WireClipList)
    /// A piece of a recording, after ``StudioClient/fetchClip(_:)`` (protocol 1.4).
    case clipData(ClipData)
    /// The agent sent an error (authenticated, in session); `closed` follows.
    case peerError(code: UInt16, reason: String)
    /// The session ended.
    case closed(StudioCloseReason)
}
