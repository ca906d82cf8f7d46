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

    /// Creates a hello.
    public init(
        versionMajor: UInt8 = WireLimits.versionMajor, versionMinor: UInt8 = WireLimits.versionMinor,
        studioId: String, studioName: String, audioSamplesRequired: UInt32,
        preferredWidth: UInt16 = 1280, preferredHeight: UInt16 = 720,
        codec: VideoCodecRequest = .agentDecides, jpegQuality: UInt8 = 0
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
        try r.expectEnd()
        guard WireLimits.audioSamplesRequired.contains(samples) else {
            throw WireError(.badRequest, "studioHello asks for \(samples) audio samples per packet; the range is 64...48000")
        }
        try checkVideoSize(width: width, height: height, field: "studioHello preferred size", code: .badRequest)
        guard let codec = VideoCodecRequest(rawValue: codecByte) else {
            throw WireError(.badRequest, "studioHello asks for codec \(codecByte); v1 knows 0 (agent decides), 1 (bgra), 2 (jpeg)")
        }
        guard quality <= 100 else {
            throw WireError(.badRequest, "studioHello asks for JPEG quality \(quality); the range is 1...100, or 0 for the default")
        }
        return StudioHello(
            versionMajor: major, versionMinor: minor, studioId: studioId, studioName: studioName,
            audioSamplesRequired: samples, preferredWidth: width, preferredHeight: height, codec: codec, jpegQuality: quality)
    }
}
