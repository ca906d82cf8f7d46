/// The cleartext preamble the initiator (studio) sends first. It is also the Noise prologue on both sides.
///
/// Layout: magic `CAMO`, version major, version minor, pattern, idLength (0...64), initiator id (UTF-8).
public struct Preamble: Sendable, Equatable {
    /// The magic bytes "CAMO".
    public static let magic: [UInt8] = [0x43, 0x41, 0x4D, 0x4F]
    /// The length of the fixed part (before the id).
    public static let fixedLength = 8

    /// Major version; only 1 is understood.
    public var versionMajor: UInt8
    /// Minor version; any value is accepted by a v1 responder.
    public var versionMinor: UInt8
    /// The handshake pattern the initiator will run.
    public var pattern: HandshakePattern
    /// The initiator's id (the studio id); must be non-empty for KK.
    public var initiatorId: String

    /// A preamble of the current version.
    public init(
        versionMajor: UInt8 = WireLimits.versionMajor, versionMinor: UInt8 = WireLimits.versionMinor,
        pattern: HandshakePattern, initiatorId: String
    ) {
        self.versionMajor = versionMajor
        self.versionMinor = versionMinor
        self.pattern = pattern
        self.initiatorId = initiatorId
    }

    /// Checks what `decode` would check: id length, characters, non-empty id for KK.
    public func validate() throws(WireError) {
        let idLength = initiatorId.utf8.count
        guard idLength <= WireLimits.maxIdLength else {
            throw .violation("the preamble id has \(idLength) bytes; the limit is \(WireLimits.maxIdLength)")
        }
        guard !WireText.containsControlCharacters(initiatorId) else {
            throw .violation("the preamble id contains a control character")
        }
        guard pattern != .kk || idLength > 0 else {
            throw .violation("a KK preamble must carry the initiator id")
        }
    }

    /// The bytes on the wire. Call `validate()` first: an over-long id is cut to 64 bytes here.
    public func encoded() -> [UInt8] {
        let id = WireText.encode(initiatorId, maxBytes: WireLimits.maxIdLength)
        return Self.magic + [versionMajor, versionMinor, pattern.rawValue, UInt8(id.count)] + id
    }

    /// Parses a preamble from the start of `bytes`.
    /// - Returns: the preamble and the number of bytes it used, or nil when more bytes are needed.
    /// - Throws: `protocolViolation` (bad magic, id), `unsupportedVersion`, `unsupportedPattern`.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> (Preamble, consumed: Int)? {
        let start = bytes.startIndex
        // Check the magic as far as it has arrived, so garbage is refused at once.
        for (offset, expected) in magic.enumerated() where start + offset < bytes.endIndex {
            guard bytes[start + offset] == expected else {
                throw .violation("the connection does not start with the CAMO preamble magic")
            }
        }
        guard bytes.count >= fixedLength else { return nil }
        let major = bytes[start + 4]
        let minor = bytes[start + 5]
        guard major == WireLimits.versionMajor else {
            throw WireError(.unsupportedVersion, "protocol version \(major).\(minor) is not supported; this side speaks 1.x")
        }
        guard let pattern = HandshakePattern(rawValue: bytes[start + 6]) else {
            throw WireError(.unsupportedPattern, "handshake pattern \(bytes[start + 6]) is not one of 1 (XX), 2 (XXpsk3), 3 (KK)")
        }
        let idLength = Int(bytes[start + 7])
        guard idLength <= WireLimits.maxIdLength else {
            throw .violation("the preamble id has \(idLength) bytes; the limit is \(WireLimits.maxIdLength)")
        }
        guard pattern != .kk || idLength > 0 else {
            throw .violation("a KK preamble must carry the initiator id")
        }
        guard bytes.count >= fixedLength + idLength else { return nil }
        let idBytes = bytes[(start + fixedLength)..<(start + fixedLength + idLength)]
        let id = try WireText.decode(idBytes, field: "the preamble id")
        return (Preamble(versionMajor: major, versionMinor: minor, pattern: pattern, initiatorId: id), fixedLength + idLength)
    }
}
