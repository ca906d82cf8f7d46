import CamoStorage
import CamoWire
import Foundation
import Logging

/// A studio this agent has paired with: who it is and its long-term key.
public struct PairedStudio: Sendable, Codable, Equatable, Identifiable {
    /// The studio's id (from the QR code, proven in the pairing handshake).
    public var id: String
    /// The studio's name when it paired.
    public var name: String
    /// The studio's long-term X25519 public key (32 bytes), base64 in the file.
    public var publicKey: Data
    /// When the pairing completed.
    public var pairedAt: Date
    /// The agent's last contact with the studio: the pairing, then the start of its latest session (written at
    /// most once a minute). Nil only in files written before pairing counted as contact.
    public var lastSeen: Date?
    /// True when the studio may read the camera's settings but not change them (`camo-agent paired --read-only`).
    /// Nil (files from before settings) means it may write.
    public var settingsReadOnly: Bool?

    /// Whether the studio may change settings.
    public var maySetSettings: Bool { settingsReadOnly != true }

    /// A record from its parts. `lastSeen` defaults to `pairedAt`: pairing is contact (PAIRING.md, section 5).
    public init(id: String, name: String, publicKey: [UInt8], pairedAt: Date, lastSeen: Date? = nil) {
        self.id = id
        self.name = name
        self.publicKey = Data(publicKey)
        self.pairedAt = pairedAt
        self.lastSeen = lastSeen ?? pairedAt
    }
}

/// The agent's paired-device list: `paired.json` in the state directory, owner-only, written atomically on
/// every change, so a crash (even SIGKILL) leaves either the old or the new list, never a mix.
///
/// A corrupt file is reported and moved aside (the studios in it must pair again), never silently replaced.
public final class PairedDeviceStore: Sendable {
    private let list: PairedList<PairedStudio>

    /// The file name inside the state directory.
    public static let fileName = "paired.json"

    /// Loads `directory/paired.json` (an empty list when missing; moved aside and reported when corrupt).
    public init(directory: String, logger: Logger) throws {
        list = try PairedList(file: JSONStateFile(path: directory + "/" + Self.fileName), isValid: Self.isValid)
        if let report = list.report(peers: "paired studios") {
            logger.error("\(report.sentence)", metadata: report.details.mapValues { .string($0) })
        }
    }

    private static func isValid(_ studio: PairedStudio) -> Bool {
        studio.publicKey.count == 32 && !studio.id.isEmpty && WireText.isValidIdentifier(studio.id)
    }

    /// Reads `directory/paired.json` without changing anything (for `camo-agent paired` while no agent runs).
    /// - Throws: when the file cannot be read or does not parse (it is left as it is).
    public static func peek(directory: String) throws -> [PairedStudio] {
        let file = JSONStateFile<[PairedStudio]>(path: directory + "/" + fileName)
        switch try file.read() {
        case .none: return []
        case .some(.success(let list)): return list.filter(isValid)
        case .some(.failure(let problem)):
            throw JSONStateFile<[PairedStudio]>.Failure.unreadable(path: file.path + " (\(problem.reason); the agent keeps it aside when it starts)")
        }
    }

    /// A store that lives in memory only (tests, and controllers without a state directory).
    public init(inMemory initial: [PairedStudio] = []) {
        list = PairedList(inMemory: initial, isValid: Self.isValid)
    }

    /// The paired studios, in pairing order.
    public var all: [PairedStudio] { list.all }

    /// The studio with `id`, if paired.
    public func studio(id: String) -> PairedStudio? { list.record(id: id) }

    /// Adds a studio, replacing an earlier pairing with the same id (a studio that paired again has a new key).
    public func add(_ studio: PairedStudio) throws { try list.add(studio) }

    /// Removes a studio. Returns false when it was not paired.
    @discardableResult
    public func remove(id: String) throws -> Bool { try list.remove(id: id) }

    /// Records that a studio opened a session now.
    public func markSeen(id: String, at date: Date = Date()) throws {
        try list.update(id: id) { $0.lastSeen = date }
    }

    /// Lets a studio change settings, or only read them. Returns false when it is not paired.
    @discardableResult
    public func setSettingsReadOnly(id: String, _ readOnly: Bool) throws -> Bool {
        guard list.record(id: id) != nil else { return false }
        try list.update(id: id) { $0.settingsReadOnly = readOnly }
        return true
    }
}
