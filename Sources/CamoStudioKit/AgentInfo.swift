/// Who the agent is and what it will send, from its hello.
public struct AgentInfo: Sendable, Equatable {
    /// The agent's stable id.
    public var agentId: String
    /// Human-readable name.
    public var agentName: String
    /// Hardware model.
    public var model: String
    /// Agent software version.
    public var softwareVersion: String
    /// The camera in use.
    public var camera: String
    /// The microphone in use.
    public var microphone: String
    /// Capability bits (bit0 bgra, bit1 jpeg, bit2 pause, bit3 audio, bit4 keepalive).
    public var capabilities: UInt32
    /// Frame width the agent will send.
    public var width: Int
    /// Frame height the agent will send.
    public var height: Int
    /// The codec the agent will send.
    public var codec: StudioVideoCodec
    /// The accepted audio packet size in sample frames.
    public var audioSamplesRequired: Int
    /// The agent's long-term public key as proven in the handshake.
    public var staticPublicKey: [UInt8]

    /// Agent info from its parts.
    public init(agentId: String, agentName: String, model: String, softwareVersion: String, camera: String,
                microphone: String, capabilities: UInt32, width: Int, height: Int, codec: StudioVideoCodec,
                audioSamplesRequired: Int, staticPublicKey: [UInt8]) {
        self.agentId = agentId
        self.agentName = agentName
        self.model = model
        self.softwareVersion = softwareVersion
        self.camera = camera
        self.microphone = microphone
        self.capabilities = capabilities
        self.width = width
        self.height = height
        self.codec = codec
        self.audioSamplesRequired = audioSamplesRequired
        self.staticPublicKey = staticPublicKey
    }

    /// The agent can pause a session on request.
    public var canPause: Bool { capabilities & 0b100 != 0 }
    /// The agent sends audio.
    public var hasAudio: Bool { capabilities & 0b1000 != 0 }
}
