/// Reads big-endian fields from a byte slice; every failure is a `WireError` naming the field.
struct ByteReader {
    private let bytes: ArraySlice<UInt8>
    private(set) var index: Int
    /// The name of the structure being read, for error reasons ("studioHello").
    let context: String

    init(_ bytes: ArraySlice<UInt8>, context: String) {
        self.bytes = bytes
        self.index = bytes.startIndex
        self.context = context
    }

    var remaining: Int { bytes.endIndex - index }

    private mutating func take(_ count: Int, _ field: String) throws(WireError) -> ArraySlice<UInt8> {
        guard count <= remaining else {
            throw .violation("\(context) is truncated: \(field) needs \(count) bytes but only \(remaining) remain")
        }
        let slice = bytes[index..<(index + count)]
        index += count
        return slice
    }

    private mutating func integer<T: FixedWidthInteger & UnsignedInteger>(_ type: T.Type, _ field: String) throws(WireError) -> T {
        let slice = try take(MemoryLayout<T>.size, field)
        var value: T = 0
        for byte in slice { value = value << 8 | T(byte) }
        return value
    }

    mutating func u8(_ field: String) throws(WireError) -> UInt8 { try integer(UInt8.self, field) }
    mutating func u16(_ field: String) throws(WireError) -> UInt16 { try integer(UInt16.self, field) }
    mutating func u32(_ field: String) throws(WireError) -> UInt32 { try integer(UInt32.self, field) }
    mutating func u64(_ field: String) throws(WireError) -> UInt64 { try integer(UInt64.self, field) }

    mutating func bytes(_ count: Int, _ field: String) throws(WireError) -> ArraySlice<UInt8> { try take(count, field) }

    /// `str8`: u8 length + UTF-8 without control characters, at most `maxBytes` bytes.
    mutating func str8(_ field: String, maxBytes: Int = 255) throws(WireError) -> String {
        let length = Int(try u8("\(field) length"))
        guard length <= maxBytes else {
            throw .violation("\(context).\(field) has \(length) bytes; the limit is \(maxBytes)")
        }
        return try WireText.decode(try take(length, field), field: "\(context).\(field)")
    }

    /// `str16`: u16 length + UTF-8 without control characters.
    mutating func str16(_ field: String) throws(WireError) -> String {
        let length = Int(try u16("\(field) length"))
        return try WireText.decode(try take(length, field), field: "\(context).\(field)")
    }

    mutating func rest() -> ArraySlice<UInt8> {
        let slice = bytes[index...]
        index = bytes.endIndex
        return slice
    }

    /// Whether every byte has been read.
    var isAtEnd: Bool { remaining == 0 }

    func expectEnd() throws(WireError) {
        guard remaining == 0 else {
            throw .violation("\(context) has \(remaining) unexpected trailing bytes")
        }
    }
}

/// Appends big-endian fields to a byte array.
struct ByteWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 64) { bytes.reserveCapacity(capacity) }

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { Self.append(value, to: &bytes) }
    mutating func u32(_ value: UInt32) { Self.append(value, to: &bytes) }
    mutating func u64(_ value: UInt64) { Self.append(value, to: &bytes) }
    mutating func str8(_ text: String) {
        let utf8 = WireText.encode(text, maxBytes: 255)
        bytes.append(UInt8(utf8.count))
        bytes.append(contentsOf: utf8)
    }
    mutating func str16(_ text: String) {
        let utf8 = WireText.encode(text, maxBytes: 65_535)
        u16(UInt16(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        var shift = T.bitWidth - 8
        while shift >= 0 {
            bytes.append(UInt8(truncatingIfNeeded: value >> shift))
            shift -= 8
        }
    }
}

/// The text rules of the wire: UTF-8, no control characters (Unicode general category Cc).
public enum WireText {
    /// True when `text` can travel as an id: 0...`WireLimits.maxIdLength` UTF-8 bytes, no control characters.
    public static func isValidIdentifier(_ text: String) -> Bool {
        text.utf8.count <= WireLimits.maxIdLength && !containsControlCharacters(text)
    }

    /// True when `text` contains a control character (U+0000–U+001F, U+007F–U+009F).
    public static func containsControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    static func decode(_ bytes: ArraySlice<UInt8>, field: String) throws(WireError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .violation("\(field) is not valid UTF-8")
        }
        guard !containsControlCharacters(text) else {
            throw .violation("\(field) contains a control character")
        }
        return text
    }

    /// The UTF-8 bytes of `text` for the wire: control characters become spaces and the result is cut
    /// at a character boundary so that it fits in `maxBytes`. Validate ids before sending them.
    static func encode(_ text: String, maxBytes: Int) -> [UInt8] {
        var out: [UInt8] = []
        for character in text {
            var piece = String(character)
            if containsControlCharacters(piece) { piece = " " }
            let utf8 = Array(piece.utf8)
            if out.count + utf8.count > maxBytes { break }
            out.append(contentsOf: utf8)
        }
        return out
    }
}
