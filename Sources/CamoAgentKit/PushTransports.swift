import CamoMedia
import CamoRecording
import CamoStorage
import CamoWeb
import Foundation
import Logging
import Synchronization

/// One push transport: the model's PushAvStreamTransport connection, where the agent pushes its recordings.
///
/// JSON: `{"id":1,"url":"https://nvr.local/ingest/camo","status":"active","streamUsage":"recording","caFile":"/etc/camo/ca.pem",
/// "token":"(set)","delivery":{...}}`; the token is written as `(set)` whenever a transport is shown.
public struct PushTransport: Sendable, Codable, Equatable {
    /// Whether recordings go to it.
    public enum Status: String, Sendable, Codable, Hashable {
        /// Recordings are pushed.
        case active
        /// Nothing is pushed (what waits is dropped).
        case inactive
    }

    /// The connection id, from 1.
    public var id: Int
    /// `https://…` (each recording is PUT to URL/NAME) or an absolute directory path (each is copied in).
    public var url: String
    /// Whether recordings go to it.
    public var status: Status = .active
    /// What it carries (the model's stream usage): always `recording` here.
    public var streamUsage = "recording"
    /// A PEM file of the CA(s) to trust for it besides the system's.
    public var caFile: String?
    /// A bearer token for it (`Authorization: Bearer`); shown only as `(set)`.
    public var token: String?
    /// Its delivery counters (when shown).
    public var delivery: WebhookStats?

    /// A transport from its parts.
    public init(id: Int, url: String, status: Status = .active, caFile: String? = nil, token: String? = nil) {
        self.id = id
        self.url = url
        self.status = status
        self.caFile = caFile
        self.token = token
    }

    /// As it may be shown or logged: the token as `(set)`.
    public var shown: PushTransport {
        var copy = self
        if copy.token != nil { copy.token = "(set)" }
        return copy
    }
}

/// A transport's definition as the control socket carries it (`transport-add`, `transport-modify`): what is given is
/// set, an empty `caFile` or `token` clears it.
public struct PushTransportDefinition: Sendable, Codable {
    /// `https://…` or an absolute directory.
    public var url: String?
    /// A PEM file of the CA(s) to trust.
    public var caFile: String?
    /// A bearer token.
    public var token: String?

    /// A definition from its parts.
    public init(url: String? = nil, caFile: String? = nil, token: String? = nil) {
        self.url = url
        self.caFile = caFile
        self.token = token
    }
}

/// What the control socket asks of the push transports (the model's find, add, modify, remove and set status).
public protocol PushTransportCommands: Sendable {
    /// Every transport, tokens hidden, with its counters.
    var list: [PushTransport] { get }
    /// Adds one; returns it as shown.
    func add(url: String, caFile: String?, token: String?) throws(PushTransportError) -> PushTransport
    /// Replaces what is given of one.
    func modify(id: Int, url: String?, caFile: String?, token: String?) throws(PushTransportError) -> PushTransport
    /// Removes one.
    func remove(id: Int) throws(PushTransportError)
    /// Sets one's status.
    func setStatus(id: Int, _ status: PushTransport.Status) throws(PushTransportError) -> PushTransport
}

/// The push transports: find, add, modify, remove and set status (the model's PushAvStreamTransport commands), kept
/// in `transports.json` in the state directory, and each kept recording pushed to every active one through its own
/// ``PushTarget`` (bounded queue, retries, never blocking the recorder).
final class PushTransports: PushTransportCommands {
    private struct State {
        var transports: [PushTransport] = []
        var targets: [Int: PushTarget] = [:]
    }

    private let file: JSONStateFile<[PushTransport]>
    private let clock: any MonotonicClock
    private let logger: Logger
    private let state = Mutex(State())

    /// Loads the saved transports from `stateDirectory` and starts the active ones; a saved one that cannot start
    /// (its CA file gone) is kept, inactive targets aside, and logged.
    init(stateDirectory: String, clock: any MonotonicClock, logger: Logger) throws(JSONStateFile<[PushTransport]>.Failure) {
        file = JSONStateFile(path: stateDirectory + "/transports.json")
        self.clock = clock
        self.logger = logger
        var saved: [PushTransport] = []
        switch try file.load() {
        case .missing: break
        case .loaded(let list): saved = list
        case .keptAside(let keptAs, let reason):
            logger.warning("transports.json was corrupt and was moved aside; no push transports", metadata: ["keptAs": "\(keptAs)", "reason": "\(reason)"])
        }
        state.withLock { $0.transports = saved.map { var t = $0; t.delivery = nil; return t } }
        for transport in saved where transport.status == .active {
            do {
                let target = try makeTarget(transport)
                state.withLock { $0.targets[transport.id] = target }
            } catch {
                logger.error("A push transport cannot start", metadata: ["id": "\(transport.id)", "reason": "\(error)"])
            }
        }
    }

    /// Every transport as it may be shown (tokens hidden), with its counters.
    var list: [PushTransport] {
        state.withLock { state in
            state.transports.map { transport in
                var shown = transport.shown
                shown.delivery = state.targets[transport.id]?.stats
                return shown
            }
        }
    }

    /// Adds a transport; returns it as shown.
    /// - Throws: ``PushTransportError`` for a URL that is not https or a directory, a directory that is missing or
    ///   not writable, an unreadable CA file.
    func add(url: String, caFile: String?, token: String?) throws(PushTransportError) -> PushTransport {
        try Self.checkDirectory(url)
        let id = state.withLock { ($0.transports.map(\.id).max() ?? 0) + 1 }
        let transport = PushTransport(id: id, url: url, caFile: caFile, token: token.flatMap { $0.isEmpty ? nil : $0 })
        let target = try makeTarget(transport)
        state.withLock { state in
            state.transports.append(transport)
            state.targets[id] = target
        }
        try save()
        logger.info("Push transport added", metadata: ["id": "\(id)", "url": "\(target.destination)"])
        return transport.shown
    }

    /// Replaces what is given of transport `id` (the model's modify: the other fields stay).
    func modify(id: Int, url: String?, caFile: String?, token: String?) throws(PushTransportError) -> PushTransport {
        if let url { try Self.checkDirectory(url) }
        return try update(id: id) { transport in
            if let url { transport.url = url }
            if let caFile { transport.caFile = caFile.isEmpty ? nil : caFile }
            if let token { transport.token = token.isEmpty ? nil : token }
        }
    }

    /// Removes transport `id` (what waits for it is dropped).
    func remove(id: Int) throws(PushTransportError) {
        let old = state.withLock { state -> (found: Bool, target: PushTarget?) in
            let found = state.transports.contains { $0.id == id }
            state.transports.removeAll { $0.id == id }
            defer { state.targets[id] = nil }
            return (found, state.targets[id])
        }
        guard old.found else { throw .noSuchTransport(id) }
        if let target = old.target { Task { await target.stop() } }
        try save()
    }

    /// Sets transport `id`'s status: inactive stops pushing to it (what waits is dropped), active starts again.
    func setStatus(id: Int, _ status: PushTransport.Status) throws(PushTransportError) -> PushTransport {
        try update(id: id) { $0.status = status }
    }

    /// Changes transport `id`, starts a new target for it when it is active (the old one stops; what waited for it is
    /// dropped) and saves the list; returns it as shown. Nothing changes when the new definition cannot start.
    private func update(id: Int, _ change: (inout PushTransport) -> Void) throws(PushTransportError) -> PushTransport {
        guard var transport = state.withLock({ $0.transports.first { $0.id == id } }) else { throw .noSuchTransport(id) }
        change(&transport)
        let target = transport.status == .active ? try makeTarget(transport) : nil
        let old = state.withLock { state -> PushTarget? in
            if let index = state.transports.firstIndex(where: { $0.id == id }) { state.transports[index] = transport }
            defer { state.targets[id] = target }
            return state.targets[id]
        }
        if let old { Task { await old.stop() } }
        try save()
        return transport.shown
    }

    /// Pushes a kept recording to every active transport.
    func push(_ record: ClipRecord, path: String) {
        let targets = state.withLock { Array($0.targets.values) }
        for target in targets {
            target.push(path: path, name: record.file, contentType: record.contentType)
        }
    }

    /// Stops every target (what waits is dropped).
    func stop() async {
        let targets = state.withLock { state -> [PushTarget] in
            defer { state.targets.removeAll() }
            return Array(state.targets.values)
        }
        for target in targets { await target.stop() }
    }

    /// A directory given to `add` or `modify` must be there and writable now (one that goes away later, an unmounted
    /// share, is the transport's last error and retried). An https URL is not checked here.
    static func checkDirectory(_ url: String) throws(PushTransportError) {
        guard url.hasPrefix("/") else { return }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .invalid("The directory \(url) does not exist (or is not a directory); create it, or mount the share, and add it again.")
        }
        guard access(url, W_OK | X_OK) == 0 else {
            throw .invalid("The directory \(url) is not writable by the agent's user; give that user write access (chown or chmod), or choose another.")
        }
    }

    private func makeTarget(_ transport: PushTransport) throws(PushTransportError) -> PushTarget {
        var pem: String?
        if let caFile = transport.caFile {
            guard let text = try? String(contentsOfFile: caFile, encoding: .utf8) else { throw .unreadableCA(caFile) }
            pem = text
        }
        do {
            return try PushTarget(
                url: transport.url, trustedCAPEM: pem, token: transport.token, clock: clock, label: "push transport \(transport.id)", logger: logger)
        } catch {
            throw .invalid(error.description)
        }
    }

    private func save() throws(PushTransportError) {
        let transports = state.withLock { $0.transports }
        do {
            try file.save(transports)
        } catch {
            throw .cannotSave("\(error)")
        }
    }
}

/// Why a push transport command was refused.
public enum PushTransportError: Error, CustomStringConvertible, Sendable {
    /// No transport has that id.
    case noSuchTransport(Int)
    /// The definition cannot be used (the text says why).
    case invalid(String)
    /// The CA file cannot be read.
    case unreadableCA(String)
    /// transports.json could not be written.
    case cannotSave(String)

    public var description: String {
        switch self {
        case .noSuchTransport(let id): "There is no push transport \(id); `camo-agent transports` lists them."
        case .invalid(let text): text
        case .unreadableCA(let path): "The CA file \(path) cannot be read; give a readable PEM file with --ca."
        case .cannotSave(let text): "The transports could not be saved: \(text); check the state directory is writable."
        }
    }
}
