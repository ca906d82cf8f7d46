import CamoStorage
import CamoWire
import Foundation
import Logging
import Synchronization

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
    /// When the studio last opened a session (nil: never since pairing).
    public var lastSeen: Date?

    /// A record from its parts.
    public init(id: String, name: String, publicKey: [UInt8], pairedAt: Date, lastSeen: Date? = nil) {
        self.id = id
        self.name = name
        self.publicKey = Data(publicKey)
        self.pairedAt = pairedAt
        self.lastSeen = lastSeen
    }
}

/// The agent's paired-device list: `paired.json` in the state directory, owner-only, written atomically on
/// every change, so a crash (even SIGKILL) leaves either the old or the new list, never a mix.
///
/// A corrupt file is reported and moved aside (the studios in it must pair again), never silently replaced.
public final class PairedDeviceStore: Sendable {
    private let file: JSONStateFile<[PairedStudio]>?
    private let studios: Mutex<[PairedStudio]>

    /// The file name inside the state directory.
    public static let fileName = "paired.json"

    /// Loads `directory/paired.json` (an empty list when missing; moved aside and reported when corrupt).
    public init(directory: String, logger: Logger) throws {
        let file = JSONStateFile<[PairedStudio]>(path: directory + "/" + Self.fileName)
        self.file = file
        switch try file.load() {
        case .missing:
            studios = Mutex([])
        case .loaded(let list):
            let valid = list.filter(Self.isValid)
            if valid.count < list.count {
                // Never drop records silently: keep the file as it was beside the one the next change writes.
                let keptAs = (try? file.keepAside(copy: true)) ?? "(could not keep a copy)"
                logger.error(
                    "The paired-device list has records with a bad id or key; they are ignored and must pair again",
                    metadata: ["file": "\(file.path)", "ignored": "\(list.filter { !Self.isValid($0) }.map(\.id))", "copyKeptAs": "\(keptAs)"])
            }
            studios = Mutex(valid)
        case .keptAside(let keptAs, let reason):
            logger.error(
                "The paired-device list could not be read; it was kept aside and the agent starts with no paired studios. Pair the studios again, or repair the file and move it back while the agent is stopped.",
                metadata: ["file": "\(file.path)", "keptAs": "\(keptAs)", "reason": "\(reason)"])
            studios = Mutex([])
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
        file = nil
        studios = Mutex(initial)
    }

    /// The paired studios, in pairing order.
    public var all: [PairedStudio] { studios.withLock { $0 } }

    /// The studio with `id`, if paired.
    public func studio(id: String) -> PairedStudio? {
        studios.withLock { list in list.first { $0.id == id } }
    }

    /// Adds a studio, replacing an earlier pairing with the same id (a studio that paired again has a new key).
    public func add(_ studio: PairedStudio) throws {
        try mutate { list in
            list.removeAll { $0.id == studio.id }
            list.append(studio)
        }
    }

    /// Removes a studio. Returns false when it was not paired.
    @discardableResult
    public func remove(id: String) throws -> Bool {
        var found = false
        try mutate { list in
            found = list.contains { $0.id == id }
            list.removeAll { $0.id == id }
        }
        return found
    }

    /// Records that a studio opened a session now.
    public func markSeen(id: String, at date: Date = Date()) throws {
        try mutate { list in
            guard let index = list.firstIndex(where: { $0.id == id }) else { return }
            list[index].lastSeen = date
        }
    }

    /// Applies `change` and writes the result before anyone sees it; on a write error nothing changes.
    private func mutate(_ change: (inout [PairedStudio]) -> Void) throws {
        try studios.withLock { list in
            var updated = list
            change(&updated)
            guard updated != list else { return }
            try file?.save(updated)
            list = updated
        }
    }
}
