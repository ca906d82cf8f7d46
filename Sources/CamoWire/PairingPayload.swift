/// The text of a studio's pairing QR code (Docs/PAIRING.md, section 1).
///
/// ```text
/// camo-pair:1?id=<studio id>&name=<percent-encoded UTF-8>&secret=<base64url, 43 chars>&exp=<Unix seconds>[&addr=<host:port>,...]
/// ```
///
/// The scheme is compared case-insensitively, the fields may come in any order, and leading or trailing ASCII
/// whitespace (a pasted newline) is ignored. Everything else is strict: ``parse(_:now:)`` refuses what it does
/// not understand with a ``PairingPayloadError`` whose ``PairingPayloadError/detail`` tells the user what to do.
/// For any payload that ``validate(now:)`` accepts, `parse(payload.uri, now:)` gives the payload back.
public struct PairingPayload: Sendable, Equatable {
    /// The URI scheme, `camo-pair`.
    public static let scheme = "camo-pair"
    /// The payload version this implementation reads and writes.
    public static let version = 1
    /// The length of the pairing secret in bytes (43 base64url characters).
    public static let secretLength = 32
    /// The longest accepted payload text in UTF-8 bytes, surrounding whitespace included.
    public static let maxLength = 1024
    /// The longest studio name in UTF-8 bytes (after percent-decoding).
    public static let maxNameBytes = 64
    /// The longest studio id in UTF-8 bytes.
    public static let maxIdBytes = 64
    /// The most addresses a payload may carry.
    public static let maxAddresses = 4
    /// How far apart (seconds) the studio's and this machine's clocks may be.
    public static let clockSkewAllowance: UInt64 = 600
    /// The longest time (seconds) a studio may make a payload valid for.
    public static let maxLifetime: UInt64 = 600
    /// The field names, in the order ``uri`` writes them.
    public static let fieldNames = ["id", "name", "secret", "exp", "addr"]

    /// The studio's id: 1...64 characters out of `A-Z a-z 0-9 . _ -`.
    public var studioId: String
    /// The studio's name for people: 1...64 UTF-8 bytes, no control characters.
    public var studioName: String
    /// The pairing secret (the XXpsk3 pre-shared key), ``secretLength`` bytes.
    public var secret: [UInt8]
    /// The last second (Unix time) at which the payload is valid on the studio's clock.
    public var expiry: UInt64
    /// Where the studio can be reached, 0...``maxAddresses`` entries (a hint; mDNS is the main way).
    public var addresses: [PairingAddress]

    /// Creates a payload from its parts. Nothing is checked; see ``validate(now:)``.
    public init(studioId: String, studioName: String, secret: [UInt8], expiry: UInt64, addresses: [PairingAddress] = []) {
        self.studioId = studioId
        self.studioName = studioName
        self.secret = secret
        self.expiry = expiry
        self.addresses = addresses
    }

    /// A payload with a fresh random 32-byte secret from the system's random source, valid until
    /// `now + lifetime` (Unix seconds). `lifetime` is capped at ``maxLifetime``.
    ///
    /// The id and name are not checked here; call ``validate(now:)`` before showing the code.
    public static func generate(
        studioId: String, studioName: String, addresses: [PairingAddress] = [], lifetime: UInt64 = 120, now: UInt64
    ) -> PairingPayload {
        var random = SystemRandomNumberGenerator()
        let secret = (0..<secretLength).map { _ in UInt8.random(in: .min ... .max, using: &random) }
        let (expiry, overflow) = now.addingReportingOverflow(min(lifetime, maxLifetime))
        return PairingPayload(
            studioId: studioId, studioName: studioName, secret: secret,
            expiry: overflow ? .max : expiry, addresses: addresses)
    }

    /// The URI text, what the QR code holds: fields in the order `id`, `name`, `secret`, `exp`, `addr`; the
    /// name with every byte but RFC 3986's unreserved characters percent-encoded (upper-case hex); `addr` left
    /// out when there are no addresses.
    public var uri: String {
        var text = "\(Self.scheme):\(Self.version)?id=\(studioId)&name=\(PercentEncoding.encode(studioName))"
        text += "&secret=\(Base64URL.encode(secret))&exp=\(expiry)"
        if !addresses.isEmpty {
            text += "&addr=" + addresses.map(\.uriForm).joined(separator: ",")
        }
        return text
    }

    /// Parses a pairing code strictly and checks it against the clock.
    ///
    /// - Parameters:
    ///   - text: The scanned or pasted text.
    ///   - now: This machine's clock, Unix seconds.
    /// - Throws: ``PairingPayloadError`` with the first problem found, checked in this order: the length, the
    ///   scheme, the version, each field's shape, missing fields, each field's encoding, then ``validate(now:)``.
    public static func parse(_ text: String, now: UInt64) throws(PairingPayloadError) -> PairingPayload {
        let payload = try PayloadParser.parse(text)
        try payload.validate(now: now)
        return payload
    }

    /// Checks every rule but the syntax: the id, the name, the secret's length, the addresses, and the time.
    ///
    /// The payload is valid iff `expiry + clockSkewAllowance >= now` (else ``PairingPayloadError/Reason/expired``)
    /// and `expiry <= now + maxLifetime + clockSkewAllowance` (else ``PairingPayloadError/Reason/clockSkew``).
    public func validate(now: UInt64) throws(PairingPayloadError) {
        try validateId()
        try validateName()
        guard secret.count == Self.secretLength else {
            throw PairingPayloadError(
                .badSecretLength,
                "The secret in the pairing code is \(secret.count) bytes long; it must be \(Self.secretLength) bytes "
                    + "(43 base64url characters). The code was cut or altered: copy it again exactly, or make a new "
                    + "code on the studio (camo-studio pair).")
        }
        try validateAddresses()
        try validateTime(now: now)
    }

    private func validateId() throws(PairingPayloadError) {
        let what = "The studio id \(Quote.text(studioId))"
        let fix = "Give the studio an id of 1 to \(Self.maxIdBytes) letters, digits, '.', '_' or '-' and make a new code "
            + "(camo-studio pair)."
        guard !studioId.isEmpty else {
            throw PairingPayloadError(.missingField, "The pairing code has an empty id field. " + Self.newCodeAdvice)
        }
        guard studioId.utf8.count <= Self.maxIdBytes else {
            throw PairingPayloadError(
                .invalidId, "\(what) is \(studioId.utf8.count) bytes long; at most \(Self.maxIdBytes) are allowed. \(fix)")
        }
        guard studioId.utf8.allSatisfy(ASCII.isIdCharacter), WireText.isValidIdentifier(studioId) else {
            throw PairingPayloadError(
                .invalidId, "\(what) contains characters other than letters, digits, '.', '_' and '-'. \(fix)")
        }
    }

    private func validateName() throws(PairingPayloadError) {
        guard !studioName.isEmpty else {
            throw PairingPayloadError(.missingField, "The pairing code has an empty name field. " + Self.newCodeAdvice)
        }
        if let control = studioName.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            throw PairingPayloadError(
                .controlCharacters,
                "The studio name \(Quote.text(studioName)) contains a control character (\(Quote.codePoint(control))). "
                    + "Rename the studio without line breaks or other control characters and make a new code "
                    + "(camo-studio pair).")
        }
        guard studioName.utf8.count <= Self.maxNameBytes else {
            throw PairingPayloadError(
                .tooLong,
                "The studio name is \(studioName.utf8.count) bytes long in UTF-8; at most \(Self.maxNameBytes) are "
                    + "allowed. Give the studio a shorter name and make a new code (camo-studio pair).")
        }
    }

    private func validateAddresses() throws(PairingPayloadError) {
        guard addresses.count <= Self.maxAddresses else {
            throw PairingPayloadError(
                .tooLong,
                "The pairing code lists \(addresses.count) addresses; at most \(Self.maxAddresses) are allowed. "
                    + "Make a new code on the studio (camo-studio pair) with fewer addresses.")
        }
        for address in addresses where !address.isValid {
            throw PairingPayloadError(
                .badEncoding,
                "The address \(Quote.text(address.description)) in the pairing code is not an IPv4 or IPv6 literal "
                    + "with a port from 1 to 65535. " + Self.newCodeAdvice)
        }
    }

    private func validateTime(now: UInt64) throws(PairingPayloadError) {
        let (latest, latestOverflow) = expiry.addingReportingOverflow(Self.clockSkewAllowance)
        if !latestOverflow && latest < now {
            throw PairingPayloadError(
                .expired,
                "The pairing code expired \(TimeText.duration(now - expiry)) ago (expiry \(TimeText.utc(expiry))). "
                    + "Make a new code on the studio (camo-studio pair) and try again. If the code is fresh, this "
                    + "machine's clock is ahead: set the clock (NTP, e.g. timedatectl set-ntp true).")
        }
        let (earliest, earliestOverflow) = now.addingReportingOverflow(Self.maxLifetime + Self.clockSkewAllowance)
        if !earliestOverflow && expiry > earliest {
            throw PairingPayloadError(
                .clockSkew,
                "The pairing code is valid until \(TimeText.utc(expiry)), \(TimeText.duration(expiry - now)) from now, "
                    + "but a studio makes codes valid for at most \(TimeText.duration(Self.maxLifetime)). It was made "
                    + "on a machine whose clock is ahead, or this machine's clock is behind; set the clock (NTP, e.g. "
                    + "timedatectl set-ntp true) on the machine that is wrong and make a new code (camo-studio pair).")
        }
    }

    static let newCodeAdvice =
        "Copy or scan the code again exactly as the studio shows it, or make a new code (camo-studio pair)."
}

/// One address in a pairing payload: an IPv4 or IPv6 literal and a TCP port.
public struct PairingAddress: Sendable, Equatable, CustomStringConvertible {
    /// An IPv4 literal (`192.168.1.20`) or an IPv6 literal without brackets, with an optional zone of 1...32
    /// unreserved characters (`fe80::1%eth0`; the URI writes the `%` as `%25`).
    public var host: String
    /// The TCP port, 1...65535.
    public var port: Int

    /// Creates an address. Nothing is checked; ``PairingPayload/validate(now:)`` checks it.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `host:port`, or `[host]:port` for IPv6 (the zone with a plain `%`).
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// True for an IPv6 literal.
    public var isIPv6: Bool { host.contains(":") }

    /// The form in the URI: as ``description``, with the zone's `%` written `%25`.
    var uriForm: String {
        guard isIPv6 else { return description }
        return "[\(host.replacingPercentWith25())]:\(port)"
    }

    /// True when the host is an IPv4 or IPv6 literal (with a zone of unreserved characters) and the port is valid.
    var isValid: Bool {
        guard (1...65_535).contains(port) else { return false }
        let bytes = Array(host.utf8)
        if let percent = bytes.firstIndex(of: ASCII.percent) {
            let zone = bytes[(percent + 1)...]
            return IPLiteral.isIPv6(bytes[..<percent]) && IPLiteral.isZone(zone)
        }
        return IPLiteral.isIPv4(bytes[...]) || IPLiteral.isIPv6(bytes[...])
    }
}

/// Why a pairing code was refused: a machine-readable ``reason`` and a sentence for the user.
public struct PairingPayloadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of refusal. The raw values appear in pairing-fixtures/manifest.json.
    public enum Reason: String, Sendable, CaseIterable {
        /// The text has no `scheme:` at all.
        case notAPairingCode
        /// A URI of another scheme (`https:`, ...).
        case unknownScheme
        /// A `camo-pair` version other than 1.
        case unknownVersion
        /// One of `id`, `name`, `secret`, `exp` is missing or empty.
        case missingField
        /// A field appears twice.
        case duplicateField
        /// A field other than `id`, `name`, `secret`, `exp`, `addr`.
        case unknownField
        /// The secret does not decode to 32 bytes.
        case badSecretLength
        /// Malformed syntax: no `=`, bad percent-encoding or UTF-8, bad base64url, bad number or address.
        case badEncoding
        /// The studio id has characters outside `A-Z a-z 0-9 . _ -` or is longer than 64 bytes.
        case invalidId
        /// The studio name contains a control character.
        case controlCharacters
        /// The whole text, the name, or the address list is too long.
        case tooLong
        /// The expiry (plus the allowed clock skew) has passed.
        case expired
        /// The expiry is further in the future than a studio may set it: one of the clocks is wrong.
        case clockSkew
    }

    /// The kind of refusal.
    public var reason: Reason
    /// A sentence for the user: what is wrong and what to do.
    public var detail: String

    /// Creates an error.
    public init(_ reason: Reason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    /// The ``detail`` sentence.
    public var description: String { detail }
}

// MARK: - Parsing

/// The syntax half of ``PairingPayload/parse(_:now:)``: text to payload, without the semantic checks.
enum PayloadParser {
    static func parse(_ text: String) throws(PairingPayloadError) -> PairingPayload {
        let all = Array(text.utf8)
        guard all.count <= PairingPayload.maxLength else {
            throw PairingPayloadError(
                .tooLong,
                "The text is \(all.count) bytes long; a pairing code is at most \(PairingPayload.maxLength) bytes. "
                    + "Copy only the code the studio shows (camo-studio pair), nothing around it.")
        }
        var start = all.startIndex
        var end = all.endIndex
        while start < end, ASCII.isWhitespace(all[start]) { start += 1 }
        while end > start, ASCII.isWhitespace(all[end - 1]) { end -= 1 }
        let bytes = all[start..<end]

        guard let colon = bytes.firstIndex(of: ASCII.colon), ASCII.isScheme(bytes[..<colon]) else {
            throw PairingPayloadError(
                .notAPairingCode,
                "This is not a pairing code: a pairing code starts with \"camo-pair:\". Scan or paste the code the "
                    + "studio shows (camo-studio pair).")
        }
        let scheme = String(decoding: bytes[..<colon], as: UTF8.self)
        guard scheme.lowercased() == PairingPayload.scheme else {
            throw PairingPayloadError(
                .unknownScheme,
                "This is a \(Quote.text(scheme + ":")) link, not a pairing code (those start with \"camo-pair:\"). "
                    + "Scan or paste the code the studio shows (camo-studio pair).")
        }
        let rest = bytes[(colon + 1)...]
        let question = rest.firstIndex(of: ASCII.question)
        let versionText = rest[..<(question ?? rest.endIndex)]
        guard !versionText.isEmpty, versionText.allSatisfy(ASCII.isDigit) else {
            throw PairingPayloadError(
                .badEncoding,
                "The pairing code's version \(Quote.bytes(versionText)) is not a decimal number (it should read "
                    + "\"camo-pair:1?...\"). " + PairingPayload.newCodeAdvice)
        }
        guard versionText.elementsEqual("\(PairingPayload.version)".utf8) else {
            throw PairingPayloadError(
                .unknownVersion,
                "The pairing code has version \(Quote.bytes(versionText)); this camo-agent reads version "
                    + "\(PairingPayload.version) only. Update camo-agent or the studio so that both are of the same release.")
        }
        let query = question.map { rest[($0 + 1)...] } ?? rest[rest.endIndex...]
        let fields = try splitFields(query)
        return try decodeFields(fields)
    }

    /// Splits `name=value&...` into raw values, checking the shape, known names and duplicates, in order.
    private static func splitFields(_ query: ArraySlice<UInt8>) throws(PairingPayloadError) -> [String: ArraySlice<UInt8>] {
        var fields: [String: ArraySlice<UInt8>] = [:]
        guard !query.isEmpty else { return fields }
        for part in query.split(separator: ASCII.ampersand, omittingEmptySubsequences: false) {
            guard let equals = part.firstIndex(of: ASCII.equals) else {
                throw PairingPayloadError(
                    .badEncoding,
                    "The pairing code has a field \(Quote.bytes(part)) without \"=\" (fields are name=value, "
                        + "separated by \"&\"). " + PairingPayload.newCodeAdvice)
            }
            let name = String(decoding: part[..<equals], as: UTF8.self)
            guard PairingPayload.fieldNames.contains(name) else {
                throw PairingPayloadError(
                    .unknownField,
                    "The pairing code has a field \(Quote.text(name)) that this camo-agent does not know (known: "
                        + "id, name, secret, exp, addr). The code may come from a newer studio: update camo-agent, "
                        + "or make a new code on the studio (camo-studio pair).")
            }
            guard fields[name] == nil else {
                throw PairingPayloadError(
                    .duplicateField,
                    "The pairing code has the field \"\(name)\" twice. " + PairingPayload.newCodeAdvice)
            }
            fields[name] = part[(equals + 1)...]
        }
        return fields
    }

    private static func decodeFields(_ fields: [String: ArraySlice<UInt8>]) throws(PairingPayloadError) -> PairingPayload {
        for name in PairingPayload.fieldNames where name != "addr" {
            guard let value = fields[name], !value.isEmpty else {
                let state = fields[name] == nil ? "no" : "an empty"
                throw PairingPayloadError(
                    .missingField,
                    "The pairing code has \(state) \(name) field; a pairing code needs id, name, secret and exp. "
                        + "It may have been cut off. " + PairingPayload.newCodeAdvice)
            }
        }
        // Safe: the loop above checked that id, name, secret and exp are present.
        let idValue = fields["id"]!, nameValue = fields["name"]!, secretValue = fields["secret"]!, expValue = fields["exp"]!
        let studioId = String(decoding: idValue, as: UTF8.self)
        let studioName = try decodeName(nameValue)
        let secret = try decodeSecret(secretValue)
        let expiry = try decodeExpiry(expValue)
        var addresses: [PairingAddress] = []
        if let addrValue = fields["addr"] {
            addresses = try decodeAddresses(addrValue)
        }
        return PairingPayload(
            studioId: studioId, studioName: studioName, secret: secret, expiry: expiry, addresses: addresses)
    }

    private static func decodeName(_ value: ArraySlice<UInt8>) throws(PairingPayloadError) -> String {
        let fix = "Characters other than letters, digits and - . _ ~ must be percent-encoded (%20 for a space, %2B for "
            + "a plus). " + PairingPayload.newCodeAdvice
        guard let decoded = PercentEncoding.decode(value, allowingRaw: ASCII.isNameCharacter) else {
            throw PairingPayloadError(
                .badEncoding, "The studio name \(Quote.bytes(value)) in the pairing code is not correctly encoded. \(fix)")
        }
        guard let name = String(validating: decoded, as: UTF8.self) else {
            throw PairingPayloadError(
                .badEncoding,
                "The studio name \(Quote.bytes(value)) in the pairing code is not valid UTF-8 after percent-decoding. "
                    + PairingPayload.newCodeAdvice)
        }
        return name
    }

    private static func decodeSecret(_ value: ArraySlice<UInt8>) throws(PairingPayloadError) -> [UInt8] {
        guard let secret = Base64URL.decode(value) else {
            throw PairingPayloadError(
                .badEncoding,
                "The secret in the pairing code is not base64url without padding (letters, digits, '-' and '_' "
                    + "only). " + PairingPayload.newCodeAdvice)
        }
        return secret
    }

    private static func decodeExpiry(_ value: ArraySlice<UInt8>) throws(PairingPayloadError) -> UInt64 {
        guard let expiry = ASCII.decimal(value, max: .max) else {
            throw PairingPayloadError(
                .badEncoding,
                "The exp field \(Quote.bytes(value)) in the pairing code is not a decimal number of Unix seconds. "
                    + PairingPayload.newCodeAdvice)
        }
        return expiry
    }

    private static func decodeAddresses(_ value: ArraySlice<UInt8>) throws(PairingPayloadError) -> [PairingAddress] {
        let items = value.split(separator: ASCII.comma, omittingEmptySubsequences: false)
        guard items.count <= PairingPayload.maxAddresses else {
            throw PairingPayloadError(
                .tooLong,
                "The pairing code lists \(items.count) addresses; at most \(PairingPayload.maxAddresses) are allowed. "
                    + "Make a new code on the studio (camo-studio pair) with fewer addresses.")
        }
        var addresses: [PairingAddress] = []
        for item in items {
            guard let address = IPLiteral.parseAddress(item) else {
                throw PairingPayloadError(
                    .badEncoding,
                    "The address \(Quote.bytes(item)) in the pairing code is not an IPv4 address with a port "
                        + "(192.168.1.20:47801) or a bracketed IPv6 address with a port ([fe80::1%25eth0]:47801). "
                        + PairingPayload.newCodeAdvice)
            }
            addresses.append(address)
        }
        return addresses
    }
}

// MARK: - Character classes and encodings

enum ASCII {
    static let colon = UInt8(ascii: ":")
    static let question = UInt8(ascii: "?")
    static let ampersand = UInt8(ascii: "&")
    static let equals = UInt8(ascii: "=")
    static let comma = UInt8(ascii: ",")
    static let percent = UInt8(ascii: "%")
    static let dot = UInt8(ascii: ".")

    static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
    static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
    static func isAlpha(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
    static func isHexDigit(_ byte: UInt8) -> Bool { hexValue(byte) != nil }

    /// RFC 3986 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~".
    static func isUnreserved(_ byte: UInt8) -> Bool {
        isAlpha(byte) || isDigit(byte) || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
    }

    /// The characters of a studio id: ALPHA / DIGIT / "." / "_" / "-".
    static func isIdCharacter(_ byte: UInt8) -> Bool {
        isAlpha(byte) || isDigit(byte) || byte == 0x2D || byte == 0x2E || byte == 0x5F
    }

    /// The characters a name value may contain unencoded: unreserved, and the RFC 3986 query characters
    /// `! $ ' ( ) * , ; = : @ / ?` (not `&`, the separator, and not `+`, which some read as a space).
    static func isNameCharacter(_ byte: UInt8) -> Bool {
        isUnreserved(byte) || nameSubDelimiters.contains(byte)
    }
    private static let nameSubDelimiters = Set("!$'()*,;=:@/?".utf8)

    /// RFC 3986 scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
    static func isScheme(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard let first = bytes.first, isAlpha(first) else { return false }
        return bytes.allSatisfy { isAlpha($0) || isDigit($0) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E }
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }

    /// A non-empty run of decimal digits whose value is at most `max`.
    static func decimal(_ bytes: ArraySlice<UInt8>, max: UInt64) -> UInt64? {
        guard !bytes.isEmpty else { return nil }
        var value: UInt64 = 0
        for byte in bytes {
            guard isDigit(byte) else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - 0x30))
            guard !overflow1, !overflow2, sum <= max else { return nil }
            value = sum
        }
        return value
    }
}

enum PercentEncoding {
    private static let hex = Array("0123456789ABCDEF".utf8)

    /// Every byte of the UTF-8 text but RFC 3986's unreserved characters as `%XX` (upper-case hex).
    static func encode(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count * 3)
        for byte in text.utf8 {
            if ASCII.isUnreserved(byte) {
                out.append(byte)
            } else {
                out += [ASCII.percent, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes `value` stands for, or nil when a `%` is not followed by two hex digits or a byte is neither
    /// `%` nor allowed raw.
    static func decode(_ value: ArraySlice<UInt8>, allowingRaw isAllowed: (UInt8) -> Bool) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(value.count)
        var index = value.startIndex
        while index < value.endIndex {
            let byte = value[index]
            if byte == ASCII.percent {
                guard index + 2 < value.endIndex, let high = ASCII.hexValue(value[index + 1]),
                    let low = ASCII.hexValue(value[index + 2])
                else { return nil }
                out.append(high << 4 | low)
                index += 3
            } else {
                guard isAllowed(byte) else { return nil }
                out.append(byte)
                index += 1
            }
        }
        return out
    }
}

/// base64url (RFC 4648 section 5) without padding.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var group: UInt32 = 0
            for offset in 0..<3 {
                group = group << 8 | UInt32(offset < count ? bytes[index + offset] : 0)
            }
            for position in 0...count {
                out.append(alphabet[Int((group >> (18 - 6 * UInt32(position))) & 0x3F)])
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes, or nil for a character outside the alphabet (padding included), an impossible length, or
    /// non-zero unused bits in the last character (so each byte string has exactly one spelling).
    static func decode(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for character in text {
            guard let value = sextet(character) else { return nil }
            buffer = buffer << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
                buffer &= (1 << UInt32(bits)) - 1
            }
        }
        guard buffer == 0 else { return nil }
        return out
    }

    private static func sextet(_ character: UInt8) -> UInt8? {
        switch character {
        case 0x41...0x5A: character - 0x41
        case 0x61...0x7A: character - 0x61 + 26
        case 0x30...0x39: character - 0x30 + 52
        case 0x2D: 62
        case 0x5F: 63
        default: nil
        }
    }
}

/// IPv4 and IPv6 literals and `host:port` as they appear in the `addr` field.
enum IPLiteral {
    /// `a.b.c.d:port` or `[v6]:port` / `[v6%25zone]:port`.
    static func parseAddress(_ item: ArraySlice<UInt8>) -> PairingAddress? {
        let hostPart: ArraySlice<UInt8>
        let portPart: ArraySlice<UInt8>
        var host: String
        if item.first == UInt8(ascii: "[") {
            guard let close = item.firstIndex(of: UInt8(ascii: "]")), close + 1 < item.endIndex,
                item[close + 1] == ASCII.colon
            else { return nil }
            hostPart = item[(item.startIndex + 1)..<close]
            portPart = item[(close + 2)...]
            if let percent = hostPart.firstIndex(of: ASCII.percent) {
                // RFC 6874: the zone follows "%25"; here it must be unreserved characters.
                let zone = hostPart[(percent + 1)...]
                guard zone.starts(with: "25".utf8), isZone(zone.dropFirst(2)), isIPv6(hostPart[..<percent])
                else { return nil }
                host = String(decoding: hostPart[..<percent], as: UTF8.self) + "%"
                    + String(decoding: zone.dropFirst(2), as: UTF8.self)
            } else {
                guard isIPv6(hostPart) else { return nil }
                host = String(decoding: hostPart, as: UTF8.self)
            }
        } else {
            guard let colon = item.lastIndex(of: ASCII.colon) else { return nil }
            hostPart = item[..<colon]
            portPart = item[(colon + 1)...]
            guard isIPv4(hostPart) else { return nil }
            host = String(decoding: hostPart, as: UTF8.self)
        }
        guard portPart.count <= 5, portPart.first != UInt8(ascii: "0"),
            let port = ASCII.decimal(portPart, max: 65_535), port >= 1
        else { return nil }
        return PairingAddress(host: host, port: Int(port))
    }

    /// The most characters in an IPv6 zone (a Linux interface name has at most 15).
    static let maxZoneLength = 32

    /// An IPv6 zone (RFC 6874) as this format allows it: 1...32 unreserved characters.
    static func isZone(_ bytes: ArraySlice<UInt8>) -> Bool {
        (1...maxZoneLength).contains(bytes.count) && bytes.allSatisfy(ASCII.isUnreserved)
    }

    /// Dotted quad, each part 0...255 in decimal without leading zeros.
    static func isIPv4(_ bytes: ArraySlice<UInt8>) -> Bool {
        let parts = bytes.split(separator: ASCII.dot, omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                part.count <= 3 && (part.count == 1 || part.first != UInt8(ascii: "0"))
                    && ASCII.decimal(part, max: 255) != nil
            }
    }

    /// RFC 4291 text form: eight groups of 1...4 hex digits, at most one `::`, an optional trailing IPv4 part.
    static func isIPv6(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.count >= 2, bytes.count <= 45 else { return false }
        var doubleColon: Int?
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            if bytes[index] == ASCII.colon && bytes[index + 1] == ASCII.colon {
                guard doubleColon == nil else { return false }
                doubleColon = index
            }
            index += 1
        }
        func groups(_ part: ArraySlice<UInt8>, last: Bool) -> Int? {
            guard !part.isEmpty else { return 0 }
            let pieces = part.split(separator: ASCII.colon, omittingEmptySubsequences: false)
            var count = 0
            for (position, piece) in pieces.enumerated() {
                if last && position == pieces.count - 1 && piece.contains(ASCII.dot) {
                    guard isIPv4(piece) else { return nil }
                    count += 2
                } else {
                    guard (1...4).contains(piece.count), piece.allSatisfy(ASCII.isHexDigit) else { return nil }
                    count += 1
                }
            }
            return count
        }
        if let split = doubleColon {
            guard let head = groups(bytes[..<split], last: false), let tail = groups(bytes[(split + 2)...], last: true)
            else { return false }
            return head + tail <= 7
        }
        return groups(bytes, last: true) == 8
    }
}

/// Quoting untrusted text inside detail sentences: short, with control characters made visible.
enum Quote {
    static func text(_ text: String) -> String {
        var out = ""
        for (count, scalar) in text.unicodeScalars.enumerated() {
            if count == 40 {
                out += "..."
                break
            }
            if scalar.properties.generalCategory == .control {
                out += "<" + codePoint(scalar) + ">"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return "\"\(out)\""
    }

    static func bytes(_ bytes: ArraySlice<UInt8>) -> String {
        text(String(decoding: bytes, as: UTF8.self))
    }

    /// `U+000A`.
    static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}

/// Times for people: UTC timestamps and rounded durations.
enum TimeText {
    /// `2026-11-18T08:53:20Z` (proleptic Gregorian, UTC); years past 9999 as raw Unix seconds.
    static func utc(_ seconds: UInt64) -> String {
        guard seconds <= 253_402_300_799 else { return "Unix time \(seconds)" }
        let days = Int64(seconds / 86_400)
        let secondOfDay = Int(seconds % 86_400)
        // Days since 1970-01-01 to a civil date, counting in 400-year eras that start on March 1st.
        let shifted = days + 719_468
        let era = shifted / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let year4 = String(repeating: "0", count: max(0, 4 - "\(year)".count)) + "\(year)"
        return "\(year4)-\(two(Int(month)))-\(two(Int(day)))T\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60))"
            + ":\(two(secondOfDay % 60))Z"
    }

    /// `45 seconds`, `12 minutes`, `3 hours`, `400 days` (rounded down).
    static func duration(_ seconds: UInt64) -> String {
        func unit(_ value: UInt64, _ name: String) -> String { value == 1 ? "1 \(name)" : "\(value) \(name)s" }
        switch seconds {
        case ..<120: return unit(seconds, "second")
        case ..<7_200: return unit(seconds / 60, "minute")
        case ..<172_800: return unit(seconds / 3_600, "hour")
        default: return unit(seconds / 86_400, "day")
        }
    }
}

extension String {
    fileprivate func replacingPercentWith25() -> String {
        var out = ""
        for character in self {
            out += character == "%" ? "%25" : String(character)
        }
        return out
    }
}
