import CamoWire
import Crypto
import Foundation

/// The studio's id and long-term Noise key.
public struct StudioIdentity: Sendable {
    /// The studio id sent in the preamble and hello (a UUID string).
    public let id: String
    let keyPair: NoiseKeyPair

    /// The long-term X25519 public key.
    public var publicKey: [UInt8] { keyPair.publicKey }

    /// An identity with a fresh key for this run; the id defaults to ``stableMachineId()``.
    public static func generated(id: String? = nil) -> StudioIdentity {
        StudioIdentity(id: id ?? stableMachineId(), keyPair: NoiseKeyPair.generate())
    }

    /// An identity whose key lives in `path`: 64 hex digits (or 32 raw bytes). A missing file is
    /// created (owner-only) with a new key. The id defaults to one derived from the public key, so it
    /// stays with the key.
    public static func load(keyFile path: String, id: String? = nil) throws -> StudioIdentity {
        let keyPair: NoiseKeyPair
        if let contents = FileManager.default.contents(atPath: path) {
            keyPair = try NoiseKeyPair(privateKey: try parseKey([UInt8](contents), path: path))
        } else {
            keyPair = NoiseKeyPair.generate()
            let hex = keyPair.privateKey.map { String(format: "%02x", $0) }.joined() + "\n"
            guard FileManager.default.createFile(atPath: path, contents: Data(hex.utf8),
                                                 attributes: [.posixPermissions: 0o600])
            else { throw StudioClientError.invalidArgument("cannot create key file \(path)") }
        }
        return StudioIdentity(id: id ?? uuid(hashing: Array("camo-studio key".utf8) + keyPair.publicKey), keyPair: keyPair)
    }

    /// A UUID derived from `/etc/machine-id` (or the host name), stable across runs on one machine.
    public static func stableMachineId() -> String {
        let machine = (try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let seed = machine.flatMap { $0.isEmpty ? nil : $0 } ?? ProcessInfo.processInfo.hostName
        return uuid(hashing: Array("camo-studio machine \(seed)".utf8))
    }

    /// A name-based UUID (version 5 layout) from the first 16 bytes of SHA-256 of `bytes`.
    public static func uuid(hashing bytes: [UInt8]) -> String {
        var b = Array(SHA256.hash(data: bytes).prefix(16))
        b[6] = (b[6] & 0x0F) | 0x50
        b[8] = (b[8] & 0x3F) | 0x80
        let hex = b.map { String(format: "%02x", $0) }.joined()
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(hex[hex.index(hex.startIndex, offsetBy: range.lowerBound)..<hex.index(hex.startIndex, offsetBy: range.upperBound)])
        }
        return parts.joined(separator: "-")
    }

    private static func parseKey(_ contents: [UInt8], path: String) throws -> [UInt8] {
        let text = String(decoding: contents, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if text.count == 64, text.allSatisfy(\.isHexDigit) {
            var key: [UInt8] = []
            var index = text.startIndex
            while index < text.endIndex {
                let next = text.index(index, offsetBy: 2)
                // The string is 64 hex digits (checked above), so every pair parses.
                key.append(UInt8(text[index..<next], radix: 16) ?? 0)
                index = next
            }
            return key
        }
        if contents.count == 32 { return contents }
        throw StudioClientError.invalidArgument("key file \(path) must hold 64 hex digits or 32 raw bytes")
    }
}
