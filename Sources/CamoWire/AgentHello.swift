/// `agentHello` (0x02, agent → studio): the agent's first transport message.
public struct AgentHello: Sendable, Equatable {
    /// The agent's protocol major version (1).
    public var versionMajor: UInt8
    /// The agent's protocol minor version.
    public var versionMinor: UInt8
    /// The agent's id (0...64 bytes, no control characters).
    public var agentId: String
    /// A human name for the agent.
    public var agentName: String
    /// The hardware model.
    public var model: String
    /// The agent software's version.
    public var softwareVersion: String
    /// The camera in use (a device name, or "synthetic test pattern").
    public var camera: String
    /// The microphone in use (or "synthetic tone").
    public var microphone: String
    /// What the agent can do.
    public var capabilities: AgentCapabilities
    /// The width the agent will send, 1...4096.
    public var width: UInt16
    /// The height the agent will send, 1...4096.
    public var height: UInt16
    /// The codec the agent will send.
    public var codec: VideoCodec
    /// The accepted audio packet size (sample frames), 64...48000.
    public var audioSamplesRequired: UInt32
    /// The audio format the agent will send (sent from 1.1 on; a 1.0 hello means float32).
    public var audioFormat: AudioSampleFormat

    /// Creates a hello.
    public init(
        versionMajor: UInt8 = WireLimits.versionMajor, versionMinor: UInt8 = WireLimits.versionMinor,
        agentId: String, agentName: String, model: String, softwareVersion: String, camera: String, microphone: String,
        capabilities: AgentCapabilities, width: UInt16, height: UInt16, codec: VideoCodec, audioSamplesRequired: UInt32,
        audioFormat: AudioSampleFormat = .float32
    ) {
        self.versionMajor = versionMajor
        self.versionMinor = versionMinor
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
        self.audioFormat = audioFormat
    }

    func encode(into w: inout ByteWriter) {
        w.u8(versionMajor)
        w.u8(versionMinor)
        w.str8(agentId)
        w.str8(agentName)
        w.str8(model)
        w.str8(softwareVersion)
        w.str8(camera)
        w.str8(microphone)
        w.u32(capabilities.rawValue)
        w.u16(width)
        w.u16(height)
        w.u8(codec.rawValue)
        w.u32(audioSamplesRequired)
        if versionMinor >= 1 { w.u8(audioFormat.rawValue) }
    }

    static func decode(_ r: inout ByteReader) throws(WireError) -> AgentHello {
        let major = try r.u8("versionMajor")
        let minor = try r.u8("versionMinor")
        guard major == WireLimits.versionMajor else {
            throw WireError(.unsupportedVersion, "the agent speaks protocol \(major).\(minor); this side speaks 1.x")
        }
        let agentId = try r.str8("agentId", maxBytes: WireLimits.maxIdLength)
        let agentName = try r.str8("agentName")
        let model = try r.str8("model")
        let softwareVersion = try r.str8("softwareVersion")
        let camera = try r.str8("camera")
        let microphone = try r.str8("microphone")
        let capabilities = AgentCapabilities(rawValue: try r.u32("capabilities"))
        let width = try r.u16("width")
        let height = try r.u16("height")
        let codecByte = try r.u8("codec")
        let samples = try r.u32("audioSamplesRequired")
        var audioFormat = AudioSampleFormat.float32
        if minor >= 1 {
            let formatByte = try r.u8("audioFormat")
            guard let format = AudioSampleFormat(rawValue: formatByte) else {
                throw .violation("agentHello names audio format \(formatByte); 1.1 knows 1 (float32) and 2 (s16)")
            }
            audioFormat = format
        }
        // Fields a later minor version adds at the end are skipped.
        if minor > WireLimits.versionMinor { _ = r.rest() }
        try r.expectEnd()
        try checkVideoSize(width: width, height: height, field: "agentHello size", code: .protocolViolation)
        guard let codec = VideoCodec(rawValue: codecByte) else {
            throw .violation("agentHello names codec \(codecByte); it must be 1 (bgra), 2 (jpeg) or 3 (h264)")
        }
        guard WireLimits.audioSamplesRequired.contains(samples) else {
            throw .violation("agentHello accepts \(samples) audio samples per packet; the range is 64...48000")
        }
        return AgentHello(
            versionMajor: major, versionMinor: minor, agentId: agentId, agentName: agentName, model: model,
            softwareVersion: softwareVersion, camera: camera, microphone: microphone, capabilities: capabilities,
            width: width, height: height, codec: codec, audioSamplesRequired: samples, audioFormat: audioFormat)
    }
}
