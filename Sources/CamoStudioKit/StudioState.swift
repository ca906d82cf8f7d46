import CamoStorage
import CamoWire
import Foundation
import Logging

/// An agent this studio has paired with.
public struct PairedAgent: Sendable, Codable, Equatable, Identifiable {
    /// The agent's id (from its hello during pairing).
    public var id: String
    /// The agent's name when it paired (mDNS may show it renamed, e.g. "Desk #2").
    public var name: String
    /// The agent's long-term X25519 public key, proven in the pairing handshake.
    public var publicKey: Data
    /// When the pairing completed.
    public var pairedAt: Date

    /// A record from its parts.
    public init(id: String, name: String, publicKey: [UInt8], pairedAt: Date) {
        self.id = id
        self.name = name
        self.publicKey = Data(publicKey)
        self.pairedAt = pairedAt
    }
}

/// The studio's state directory: its own identity (`studio-identity.json`, the long-term key, 0600) and the
/// agents it paired with (`agents.json`, 0600), both written atomically; a corrupt file is reported and
/// moved aside, never silently replaced. Several `camo-studio` runs may share the directory: every change
/// takes the directory's lock and reads the list again first, so none is lost.
public final class StudioState: Sendable {
    private struct StoredIdentity: Codable, Sendable {
        var id: String
        var privateKey: Data
    }

    /// The state directory.
    public let directory: String
    /// The studio's identity (made on first use).
    public let identity: StudioIdentity
    private let agents: PairedList<PairedAgent>

    /// Opens (and creates, owner-only) `directory`, loading or making the identity and the paired-agent list.
    public init(directory: String, logger: Logger) throws {
        self.directory = directory
        try AtomicFile.makeDirectory(directory)
        let identityFile = JSONStateFile<StoredIdentity>(path: directory + "/studio-identity.json")
        identity = try DirectoryLock.withLock(directory) { try Self.loadIdentity(identityFile, logger: logger) }
        agents = try PairedList(
            file: JSONStateFile(path: directory + "/agents.json"), sharedDirectory: directory, isValid: { $0.publicKey.count == 32 })
        if let report = agents.report(peers: "paired agents") {
            logger.error("\(report.sentence)", metadata: report.details.mapValues { .string($0) })
        }
    }

    private static func loadIdentity(_ file: JSONStateFile<StoredIdentity>, logger: Logger) throws -> StudioIdentity {
        switch try file.load() {
        case .loaded(let stored):
            if stored.privateKey.count == 32, !stored.id.isEmpty, WireText.isValidIdentifier(stored.id),
                let keyPair = try? NoiseKeyPair(privateKey: Array(stored.privateKey))
            {
                return StudioIdentity(id: stored.id, keyPair: keyPair)
            }
            let keptAs = try file.keepAside()
            logger.error(
                "The studio identity has a bad id or key; it was kept aside and a new one was made. Agents must pair again.",
                metadata: ["file": "\(file.path)", "keptAs": "\(keptAs)"])
        case .keptAside(let keptAs, let reason):
            logger.error(
                "The studio identity could not be read; it was kept aside and a new one was made. Agents must pair again.",
                metadata: ["file": "\(file.path)", "keptAs": "\(keptAs)", "reason": "\(reason)"])
        case .missing:
            break
        }
        let made = StudioIdentity(id: UUID().uuidString.lowercased(), keyPair: NoiseKeyPair.generate())
        try file.save(StoredIdentity(id: made.id, privateKey: Data(made.keyPair.privateKey)))
        logger.info("Created a new studio identity", metadata: ["id": "\(made.id)", "file": "\(file.path)"])
        return made
    }

    /// The paired agents, in pairing order.
    public var pairedAgents: [PairedAgent] { agents.all }

    /// The paired agent whose id is `idOrName`, else the one whose name is (nil when none, or several share it).
    public func agent(matching idOrName: String) -> PairedAgent? {
        let list = agents.all
        if let byId = list.first(where: { $0.id == idOrName }) { return byId }
        let byName = list.filter { $0.name == idOrName }
        return byName.count == 1 ? byName[0] : nil
    }

    /// Adds or replaces (same id) a paired agent.
    public func add(_ agent: PairedAgent) throws { try agents.add(agent) }

    /// Forgets a paired agent. Returns false when it was not paired.
    @discardableResult
    public func remove(id: String) throws -> Bool { try agents.remove(id: id) }
}
