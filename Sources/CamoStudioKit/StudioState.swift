import CamoStorage
import CamoWire
import Foundation
import Logging
import Synchronization

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
    /// The last address it was reached at (HOST:PORT), a hint when mDNS is not available.
    public var lastAddress: String?

    /// A record from its parts.
    public init(id: String, name: String, publicKey: [UInt8], pairedAt: Date, lastAddress: String? = nil) {
        self.id = id
        self.name = name
        self.publicKey = Data(publicKey)
        self.pairedAt = pairedAt
        self.lastAddress = lastAddress
    }
}

/// The studio's state directory: its own identity (`studio-identity.json`, the long-term key, 0600) and the
/// agents it paired with (`agents.json`, 0600), both written atomically; a corrupt file is reported and
/// moved aside, never silently replaced.
public final class StudioState: Sendable {
    private struct StoredIdentity: Codable, Sendable {
        var id: String
        var privateKey: Data
    }

    /// The state directory.
    public let directory: String
    /// The studio's identity (made on first use).
    public let identity: StudioIdentity
    private let agentsFile: JSONStateFile<[PairedAgent]>
    private let agents: Mutex<[PairedAgent]>

    /// Opens (and creates, owner-only) `directory`, loading or making the identity and the paired-agent list.
    public init(directory: String, logger: Logger) throws {
        self.directory = directory
        try AtomicFile.makeDirectory(directory)
        let identityFile = JSONStateFile<StoredIdentity>(path: directory + "/studio-identity.json")
        var identity: StudioIdentity?
        switch try identityFile.load() {
        case .loaded(let stored):
            if stored.privateKey.count == 32, WireText.isValidIdentifier(stored.id), !stored.id.isEmpty,
                let keyPair = try? NoiseKeyPair(privateKey: Array(stored.privateKey))
            {
                identity = StudioIdentity(id: stored.id, keyPair: keyPair)
            } else {
                logger.error("The studio identity has a bad id or key; making a new one. Agents must pair again.", metadata: ["file": "\(identityFile.path)"])
            }
        case .keptAside(let keptAs, let reason):
            logger.error(
                "The studio identity could not be read; it was kept aside and a new one was made. Agents must pair again.",
                metadata: ["file": "\(identityFile.path)", "keptAs": "\(keptAs)", "reason": "\(reason)"])
        case .missing:
            break
        }
        if identity == nil {
            let made = StudioIdentity(id: UUID().uuidString.lowercased(), keyPair: NoiseKeyPair.generate())
            try identityFile.save(StoredIdentity(id: made.id, privateKey: Data(made.keyPair.privateKey)))
            logger.info("Created a new studio identity", metadata: ["id": "\(made.id)", "file": "\(identityFile.path)"])
            identity = made
        }
        // Safe: set above on every path.
        self.identity = identity!
        agentsFile = JSONStateFile<[PairedAgent]>(path: directory + "/agents.json")
        switch try agentsFile.load() {
        case .loaded(let list):
            agents = Mutex(list.filter { $0.publicKey.count == 32 })
        case .missing:
            agents = Mutex([])
        case .keptAside(let keptAs, let reason):
            logger.error(
                "The paired-agent list could not be read; it was kept aside. Pair the agents again.",
                metadata: ["file": "\(agentsFile.path)", "keptAs": "\(keptAs)", "reason": "\(reason)"])
            agents = Mutex([])
        }
    }

    /// The paired agents, in pairing order.
    public var pairedAgents: [PairedAgent] { agents.withLock { $0 } }

    /// The paired agent whose id is `idOrName`, else the one whose name is (nil when none, or several share it).
    public func agent(matching idOrName: String) -> PairedAgent? {
        agents.withLock { list in
            if let byId = list.first(where: { $0.id == idOrName }) { return byId }
            let byName = list.filter { $0.name == idOrName }
            return byName.count == 1 ? byName[0] : nil
        }
    }

    /// Adds or replaces (same id) a paired agent.
    public func add(_ agent: PairedAgent) throws {
        try agents.withLock { list in
            var updated = list
            updated.removeAll { $0.id == agent.id }
            updated.append(agent)
            try agentsFile.save(updated)
            list = updated
        }
    }

    /// Forgets a paired agent. Returns false when it was not paired.
    @discardableResult
    public func remove(id: String) throws -> Bool {
        try agents.withLock { list in
            guard list.contains(where: { $0.id == id }) else { return false }
            let updated = list.filter { $0.id != id }
            try agentsFile.save(updated)
            list = updated
            return true
        }
    }
}
