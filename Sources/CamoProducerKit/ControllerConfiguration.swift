import CamoUSB
import CamoMedia
import CamoWire
import Foundation

/// How a ``CamoController`` runs: where it listens, who it is, and who may connect.
public struct ControllerConfiguration: Sendable {
    /// The address to listen on (`::` listens on every IPv6 and IPv4 address).
    public var host: String = "::"
    /// The TCP port; 0 picks any free port (read it back from ``CamoController/port``).
    public var port: Int = 0
    /// The agent's identity: long-term key, id, name.
    public var identity: AgentIdentity
    /// What the agent tells studios about itself.
    public var description: AgentDescription
    /// Who may connect.
    public var admission: AdmissionPolicy
    /// Where the paired-device list lives when the controller keeps it on disk (the default,
    /// ``AgentPaths/defaultStateDirectory()``).
    public var stateDirectory: String = AgentPaths.defaultStateDirectory()
    /// H.264 for studios on the network (encoder, keyframes, rate control); nil: bgra and jpeg only.
    /// ``AgentService`` sets libavcodec's encoder (CamoAgentKit's `H264Options.libavcodec`).
    public var h264: H264Options?
    /// JPEG quality (1...100) when the studio leaves it to the agent.
    public var defaultJPEGQuality: Int = 80
    /// The audio packet size before any studio asks (and reported while none is connected).
    public var defaultAudioSamplesRequired: Int = 1024
    /// At most this many established sessions at once.
    public var maxSessions: Int = WireLimits.maxSessions
    /// At most this many connections still in their handshake at once.
    public var maxPendingHandshakes: Int = WireLimits.maxPendingHandshakes
    /// Seconds a connection has to finish its handshake and hello.
    public var handshakeDeadlineSeconds: Double = 5
    /// Seconds the delegate has to decide whether to accept a studio (``CamoControllerDelegate``); then the studio
    /// is refused with a reason.
    public var admissionDecisionSeconds: Double = 3
    /// Seconds the outbound backlog of a session may stay full before the studio is ended as stalled.
    public var stallDeadlineSeconds: Double = 5
    /// Seconds without any message from a studio before it is ended.
    public var keepaliveTimeoutSeconds: Double = 10
    /// The pairing listener's TCP port; 0 (the default) picks any free port, published in `_camopairing._tcp`.
    public var pairingPort: Int = 0
    /// How long a pairing window stays open (30 s).
    public var pairingWindowNanos: UInt64 = PairingWindow.defaultDuration
    /// How long `pair --scan` looks for a QR code (30 s).
    public var scanNanos: UInt64 = 30_000_000_000
    /// At most this many pairing connections at once; each has ``handshakeDeadlineSeconds`` to finish.
    public var maxPairingConnections: Int = 8
    /// Decides which link a connection came over (loopback, the USB gadget's interface, or the network).
    public var linkClassifier = LinkClassifier()
    /// Unix seconds now, for the QR payload's expiry (inject a fixed time in tests).
    public var wallClock: @Sendable () -> UInt64 = { UInt64(max(0, Date().timeIntervalSince1970)) }

    /// A configuration with the defaults above.
    public init(identity: AgentIdentity, description: AgentDescription, admission: AdmissionPolicy) {
        self.identity = identity
        self.description = description
        self.admission = admission
    }
}

/// What the agent says about itself in its hello.
public struct AgentDescription: Sendable, Equatable {
    /// The hardware or platform, e.g. `Linux x86_64`.
    public var model: String
    /// The agent's version.
    public var softwareVersion: String
    /// The camera in use.
    public var camera: String
    /// The microphone in use.
    public var microphone: String

    /// A description from its parts.
    public init(model: String, softwareVersion: String, camera: String, microphone: String) {
        self.model = model
        self.softwareVersion = softwareVersion
        self.camera = camera
        self.microphone = microphone
    }
}
