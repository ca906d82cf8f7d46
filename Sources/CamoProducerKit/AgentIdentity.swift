import CamoStorage
import CamoWire
import Foundation
import Logging

/// Why the agent identity could not be loaded.
public enum IdentityError: Error, CustomStringConvertible {
    case unreadable(path: String)
    case cannotKeepAside(path: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path):
            return "The agent identity \(path) exists but cannot be read (check its owner and permissions); it was left untouched."
        case .cannotKeepAside(let path, let reason):
            return "The agent identity \(path) is corrupt and could not be moved aside (\(reason)); it was left untouched. Move it away by hand."
        }
    }
}

/// The agent's long-term identity: a stable id, a name, and its X25519 key pair.
///
/// Stored in the state directory as `identity.json`, owner-only, written atomically. A file that cannot be
/// read is reported and moved aside (never silently replaced) before a new identity is made.
public struct AgentIdentity: Sendable {
    /// The stable id studios see (a UUID).
    public var id: String
    /// The name studios see.
    public var name: String
    /// The long-term X25519 key pair.
    public var keyPair: NoiseKeyPair

    /// An identity from its parts (tests, or keys kept elsewhere).
    public init(id: String, name: String, keyPair: NoiseKeyPair) {
        self.id = id
        self.name = name
        self.keyPair = keyPair
    }

    private struct Stored: Codable {
        var version: Int
        var id: String
        var privateKey: String
    }

    /// Loads the identity from `directory/identity.json`, or creates one (and the directory, owner-only). `name`
    /// is not stored: the agent's name may change from run to run; the id and key stay.
    public static func loadOrCreate(in directory: String, name: String, logger: Logger) throws -> AgentIdentity {
        try AtomicFile.makeDirectory(directory)
        let path = directory + "/identity.json"
        if FileManager.default.fileExists(atPath: path) {
            guard let data = FileManager.default.contents(atPath: path) else {
                // Unreadable is not corrupt: never replace a key we merely cannot read (wrong owner, say).
                throw IdentityError.unreadable(path: path)
            }
            do {
                let stored = try JSONDecoder().decode(Stored.self, from: data)
                guard stored.version == 1, WireText.isValidIdentifier(stored.id),
                    let key = Data(base64Encoded: stored.privateKey), key.count == 32
                else {
                    throw CocoaError(.fileReadCorruptFile)
                }
                tightenPermissions(path, logger: logger)
                return AgentIdentity(id: stored.id, name: name, keyPair: try NoiseKeyPair(privateKey: Array(key)))
            } catch {
                let aside = path + ".corrupt-\(Int(Date().timeIntervalSince1970))-\(getpid())"
                do {
                    try FileManager.default.moveItem(atPath: path, toPath: aside)
                } catch let moveError {
                    throw IdentityError.cannotKeepAside(path: path, reason: "\(moveError)")
                }
                logger.error(
                    "The agent identity file could not be read; it was kept aside and a new identity was made. Paired studios must pair again.",
                    metadata: ["file": "\(path)", "keptAs": "\(aside)", "error": "\(error)"])
            }
        }
        let identity = AgentIdentity(id: UUID().uuidString.lowercased(), name: name, keyPair: .generate())
        let stored = Stored(version: 1, id: identity.id, privateKey: Data(identity.keyPair.privateKey).base64EncodedString())
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try AtomicFile.write(Array(try encoder.encode(stored)), to: path)
        logger.info("Created a new agent identity", metadata: ["id": "\(identity.id)", "file": "\(path)"])
        return identity
    }

    /// A private key readable by others is reported and made owner-only.
    private static func tightenPermissions(_ path: String, logger: Logger) {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let mode = (attributes[.posixPermissions] as? NSNumber)?.uint16Value, mode & 0o077 != 0
        else { return }
        logger.warning("The agent identity was readable by others; it is now owner-only", metadata: ["file": "\(path)"])
        try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }
}
