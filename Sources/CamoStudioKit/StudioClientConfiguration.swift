import CamoMedia
import CamoWire

/// Which codec the studio asks for.
public enum StudioCodecPreference: String, Sendable, Equatable {
    /// Let the agent pick (BGRA on trusted local links, JPEG elsewhere).
    case agentDecides
    /// Raw BGRA.
    case bgra
    /// JPEG.
    case jpeg
    /// H.264 (protocol 1.1; the agent must offer it).
    case h264
}

/// How a ``StudioClient`` authenticates: which Noise pattern it runs.
public enum StudioHandshake: Sendable, Equatable {
    /// `Noise_XX`: unpaired; an agent accepts it only where it trusts the link (loopback with `--allow-unpaired`).
    case unpaired
    /// `Noise_KK` with the agent's long-term key stored when this studio paired with it.
    case paired(agentKey: [UInt8])
    /// `Noise_XXpsk3` with the QR code's 32-byte secret: pairing, on the agent's pairing port.
    case pairing(secret: [UInt8])

    /// The pattern sent in the preamble.
    public var pattern: HandshakePattern {
        switch self {
        case .unpaired: .xx
        case .paired: .kk
        case .pairing: .xxpsk3
        }
    }
}

/// What a ``StudioClient`` says about itself and asks for in its hello, and its timers.
public struct StudioClientConfiguration: Sendable {
    /// Who the studio is (id and long-term key).
    public var identity: StudioIdentity
    /// Human-readable studio name.
    public var studioName: String
    /// Sample frames per audio packet (64...48000).
    public var audioSamplesRequired: Int
    /// Preferred frame width (1...4096).
    public var preferredWidth: Int
    /// Preferred frame height (1...4096).
    public var preferredHeight: Int
    /// Codec request.
    public var codec: StudioCodecPreference
    /// JPEG quality (0 = agent default, else 1...100).
    public var jpegQuality: Int
    /// How often to ping (default 1 s).
    public var pingIntervalNanos: UInt64
    /// Close when nothing arrives for this long (default 10 s).
    public var keepaliveTimeoutNanos: UInt64
    /// The handshake and the agent's hello must complete within this (default 5 s).
    public var handshakeTimeoutNanos: UInt64
    /// Stop reading from the agent when this many bytes of events wait for the consumer (default 64 MiB).
    public var backlogHighWaterBytes: Int
    /// Read again when the waiting events are down to this many bytes (default 16 MiB).
    public var backlogLowWaterBytes: Int
    /// How to authenticate (default: unpaired XX).
    public var handshake: StudioHandshake = .unpaired
    /// Decode JPEG frames to BGRA (true), or hand them on undecoded with no pixels (false: counting and
    /// timing only, for slow machines such as an emulated test VM).
    public var decodeVideo = true
    /// What the session is for: media (the default), or settings only (protocol 1.2: no video or audio is sent).
    public var purpose: SessionPurpose = .media
    /// The TCP connect timeout; nil (the default): ``handshakeTimeoutNanos``. The ``Recorder`` shortens it when
    /// it reconnects, so an address that does not answer costs little.
    public var connectTimeoutNanos: UInt64?
    /// Close the session when, while streaming and not paused, nothing at all arrives from the agent for this
    /// long (a dead link, see ``MediaStallDetector``); the session ends with
    /// ``StudioCloseReason/connectionLost(_:)`` at once, without waiting for the agent. Nil (the default): only
    /// the keepalive timeout applies.
    public var stallTimeoutNanos: UInt64?
    /// The clock every deadline of the session follows (the handshake, ping, keepalive and stall timeouts, the
    /// polite close's linger) and round trips are measured on; a manual clock in tests. The TCP connect timeout
    /// (``connectTimeoutNanos``) is the socket's own and stays on real time.
    public var clock: any MonotonicClock = SystemMonotonicClock()
    /// Fault injection for tests: when above 0, every n-th H.264 access unit that is not a keyframe is damaged before
    /// decoding (bytes in the middle of its slice data flipped), as a broken link or encoder would. The studio must
    /// notice, ask for a keyframe, and show a clean picture again. 0 (the default): off.
    public var damageH264Every = 0

    /// A configuration; defaults: 1280x720, the agent decides the codec, agent-default JPEG quality.
    public init(identity: StudioIdentity, studioName: String = "camo-studio", audioSamplesRequired: Int = 1024,
                preferredWidth: Int = 1280, preferredHeight: Int = 720, codec: StudioCodecPreference = .agentDecides,
                jpegQuality: Int = 0) {
        self.identity = identity
        self.studioName = studioName
        self.audioSamplesRequired = audioSamplesRequired
        self.preferredWidth = preferredWidth
        self.preferredHeight = preferredHeight
        self.codec = codec
        self.jpegQuality = jpegQuality
        self.pingIntervalNanos = 1_000_000_000
        self.keepaliveTimeoutNanos = 10_000_000_000
        self.handshakeTimeoutNanos = 5_000_000_000
        self.backlogHighWaterBytes = 64 << 20
        self.backlogLowWaterBytes = 16 << 20
    }

    /// Checks the ranges the wire format allows.
    public func validate() throws(StudioClientError) {
        guard (64...48_000).contains(audioSamplesRequired) else {
            throw .invalidArgument("audio samples must be 64...48000, got \(audioSamplesRequired)")
        }
        guard (1...4096).contains(preferredWidth), (1...4096).contains(preferredHeight) else {
            throw .invalidArgument("video size must be within 4096x4096, got \(preferredWidth)x\(preferredHeight)")
        }
        guard (0...100).contains(jpegQuality) else {
            throw .invalidArgument("JPEG quality must be 1...100 (0 = agent default), got \(jpegQuality)")
        }
        guard studioName.utf8.count <= 255 else { throw .invalidArgument("studio name is longer than 255 bytes") }
        guard connectTimeoutNanos.map({ $0 > 0 && $0 <= UInt64(Int64.max) }) ?? true else {
            throw .invalidArgument("the connect timeout must be positive")
        }
        guard stallTimeoutNanos.map({ $0 > 0 }) ?? true else { throw .invalidArgument("the stall timeout must be positive") }
    }
}
