/// `studioHello` (0x01, studio → agent): the studio's first transport message.
public struct StudioHello: Sendable, Equatable {
    /// The studio's protocol major version (1).
    public var versionMajor: UInt8
    /// The studio's protocol minor version.
    public var versionMinor: UInt8
    /// The studio's id (0...64 bytes, no control characters).
    public var studioId: String
    /// A human name for the studio (0...255 bytes).
    public var studioName: String
    /// Sample frames per audio packet, 64...48000.
    public var audioSamplesRequired: UInt32
    /// Preferred width, 1...4096 (default 1280).
    public var preferredWidth: UInt16
    /// Preferred height, 1...4096 (default 720).
    public var preferredHeight: UInt16
    /// Preferred codec.
    public var codec: VideoCodecRequest
    /// JPEG quality 1...100, or 0 for the agent's default.
    public var jpegQuality: UInt8
    /// The codecs the studio decodes (sent from 1.1 on; a 1.0 hello means bgra and jpeg).
    public var decodes: StudioDecodes
    /// The audio format the studio asks for (sent from 1.1 on; a 1.0 hello means float32).
    public var audioFormat: AudioFormatRequest
    /// What the session is for (sent from 1.2 on; older hellos mean `.media`).
    public var purpose: SessionPurpose

    /// Creates a hello.
    public init(
        versionMajor: UInt8 = WireLimits.versionMajor, versionMinor: UInt8 = WireLimits.versionMinor,
        studioId: String, studioName: String, audioSamplesRequired: UInt32,
        preferredWidth: UInt16 = 1280, preferredHeight: UInt16 = 720,
        codec: VideoCodecRequest = .agentDecides, jpegQuality: UInt8 = 0,
        decodes: StudioDecodes? = nil, audioFormat: AudioFormatRequest? = nil, purpose: SessionPurpose = .media
    ) {
        self.versionMajor = versionMajor
        self.versionMinor = versionMinor
        self.studioId = studioId
        self.studioName = studioName
        self.audioSamplesRequired = audioSamplesRequired
        self.preferredWidth = preferredWidth
        self.preferredHeight = preferredHeight
        self.codec = codec
        self.jpegQuality = jpegQuality
        let extended = versionMinor >= 1
        self.decodes = decodes ?? (extended ? [.bgra, .jpeg, .h264] : .version1_0)
        self.audioFormat = audioFormat ?? (extended ? .agentDecides : .float32)
        self.purpose = versionMinor >= 2 ? purpose : .media
    }

    func encode(into w: inout ByteWriter) {
        w.u8(versionMajor)
        w.u8(versionMinor)
        w.str8(studioId)
        w.str8(studioName)
        w.u32(audioSamplesRequired)
        w.u16(preferredWidth)
        w.u16(preferredHeight)
        w.u8(codec.rawValue)
        w.u8(jpegQuality)
        if versionMinor >= 1 {
            w.u8(decodes.rawValue)
            w.u8(audioFormat.rawValue)
        }
        if versionMinor >= 2 { w.u8(purpose.rawValue) }
    }

    static func decode(_ r: inout ByteReader) throws(WireError) -> StudioHello {
        let major = try r.u8("versionMajor")
        let minor = try r.u8("versionMinor")
        guard major == WireLimits.versionMajor else {
            throw WireError(.unsupportedVersion, "the studio speaks protocol \(major).\(minor); this side speaks 1.x")
        }
        let studioId = try r.str8("studioId", maxBytes: WireLimits.maxIdLength)
        let studioName = try r.str8("studioName")
        let samples = try r.u32("audioSamplesRequired")
        let width = try r.u16("preferredWidth")
        let height = try r.u16("preferredHeight")
        let codecByte = try r.u8("codec")
        let quality = try r.u8("jpegQuality")
        // 1.1 adds two fields; a 1.0 hello ends here.
        var decodes = StudioDecodes.version1_0
        var audioFormat = AudioFormatRequest.float32
        if minor >= 1 {
            decodes = StudioDecodes(rawValue: try r.u8("decodes"))
            let formatByte = try r.u8("audioFormat")
            guard let format = AudioFormatRequest(rawValue: formatByte) else {
                throw WireError(.badRequest, "studioHello asks for audio format \(formatByte); 1.1 knows 0 (agent decides), 1 (float32), 2 (s16)")
            }
            audioFormat = format
        }
        // 1.2 adds the purpose.
        var purpose = SessionPurpose.media
        if minor >= 2 {
            let purposeByte = try r.u8("purpose")
            guard let known = SessionPurpose(rawValue: purposeByte) else {
                throw WireError(.badRequest, "studioHello gives purpose \(purposeByte); 1.2 knows 0 (media), 1 (settings only)")
            }
            purpose = known
        }
        // A later minor version may add fields at the end: a hello of a higher minor version is read as far as this
        // side knows it, the rest skipped.
        if minor > WireLimits.versionMinor { _ = r.rest() }
        try r.expectEnd()
        guard WireLimits.audioSamplesRequired.contains(samples) else {
            throw WireError(.badRequest, "studioHello asks for \(samples) audio samples per packet; the range is 64...48000")
        }
        try checkVideoSize(width: width, height: height, field: "studioHello preferred size", code: .badRequest)
        guard let codec = VideoCodecRequest(rawValue: codecByte), codec != .h264 || minor >= 1 else {
            throw WireError(.badRequest, "studioHello asks for codec \(codecByte); 1.\(minor) knows 0 (agent decides), 1 (bgra), 2 (jpeg)\(minor >= 1 ? ", 3 (h264)" : "")")
        }
        guard quality <= 100 else {
            throw WireError(.badRequest, "studioHello asks for JPEG quality \(quality); the range is 1...100, or 0 for the default")
        }
        return StudioHello(
            versionMajor: major, versionMinor: minor, studioId: studioId, studioName: studioName,
            audioSamplesRequired: samples, preferredWidth: width, preferredHeight: height, codec: codec, jpegQuality: quality,
            decodes: decodes, audioFormat: audioFormat, purpose: purpose)
    }
}

/// What a studio's session is for (`studioHello`, 1.2).
public enum SessionPurpose: UInt8, Sendable, Hashable {
    /// Video and audio (and settings, from 1.2).
    case media = 0
    /// Settings only: the agent sends no video or audio, and the session does not count as a viewer.
    case settingsOnly = 1
}
