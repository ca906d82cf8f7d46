import Synchronization

/// A persisted list of paired peers, one record per id, in pairing order: the agent's paired studios
/// (`paired.json`) and the studio's paired agents (`agents.json`) are both one.
///
/// Every change is written (atomically, owner-only, through ``JSONStateFile``) before anyone sees it; on a
/// write error nothing changes. Records that fail `isValid` (a bad key, a bad id) are never used: loading
/// ignores them and keeps a copy of the file as it was, and says so in ``finding`` for the owner to report
/// (this module does not log).
///
/// With a shared directory several programs may change the list at once (two `camo-studio pair` runs, say):
/// each change then takes the directory's ``DirectoryLock`` and reads the file again first, so none is lost.
public final class PairedList<Record: Codable & Sendable & Equatable & Identifiable>: Sendable where Record.ID == String {
    /// What loading found that its owner should report.
    public enum Finding: Sendable, Equatable {
        /// Nothing to report: no file yet, or every record was valid.
        case clean
        /// Records failing `isValid` were ignored (their ids); a copy of the file as it was is at `copyKeptAs`
        /// (nil when the copy could not be made).
        case ignored(ids: [String], copyKeptAs: String?)
        /// The file did not parse; it was moved to `keptAs` and the list starts empty.
        case keptAside(keptAs: String, reason: String)
    }

    /// The file, or nil for a list that lives in memory only.
    public let file: JSONStateFile<[Record]>?
    /// What loading found (always ``Finding/clean`` in memory).
    public let finding: Finding
    private let sharedDirectory: String?
    private let isValid: @Sendable (Record) -> Bool
    private let records: Mutex<[Record]>

    /// Loads `file` (empty when missing; moved aside when corrupt; invalid records ignored, see ``finding``).
    /// - Parameter sharedDirectory: the state directory when other programs may change the file too: loading
    ///   and every change then hold its lock.
    /// - Throws: when the file cannot be read, or is corrupt and cannot be moved aside.
    public init(file: JSONStateFile<[Record]>, sharedDirectory: String? = nil, isValid: @escaping @Sendable (Record) -> Bool) throws {
        self.file = file
        self.sharedDirectory = sharedDirectory
        self.isValid = isValid
        let (list, finding) = if let sharedDirectory {
            try DirectoryLock.withLock(sharedDirectory) { try Self.load(file, isValid: isValid) }
        } else {
            try Self.load(file, isValid: isValid)
        }
        records = Mutex(list)
        self.finding = finding
    }

    /// A list that lives in memory only (tests, and owners without a state directory), starting as `initial`.
    public init(inMemory initial: [Record] = [], isValid: @escaping @Sendable (Record) -> Bool = { _ in true }) {
        file = nil
        sharedDirectory = nil
        self.isValid = isValid
        records = Mutex(initial)
        finding = .clean
    }

    private static func load(_ file: JSONStateFile<[Record]>, isValid: (Record) -> Bool) throws -> ([Record], Finding) {
        switch try file.load() {
        case .missing:
            return ([], .clean)
        case .loaded(let list):
            let valid = list.filter(isValid)
            guard valid.count < list.count else { return (valid, .clean) }
            // Never drop records silently: keep the file as it was beside the one the next change writes.
            let copy = try? file.keepAside(copy: true)
            return (valid, .ignored(ids: list.filter { !isValid($0) }.map(\.id), copyKeptAs: copy))
        case .keptAside(let keptAs, let reason):
            return ([], .keptAside(keptAs: keptAs, reason: reason))
        }
    }

    /// ``finding`` as a sentence for the log and its details, or nil when there is nothing to report.
    /// - Parameter peers: what the list holds, in the plural ("paired studios").
    public func report(peers: String) -> (sentence: String, details: [String: String])? {
        let path = file?.path ?? "(in memory)"
        switch finding {
        case .clean:
            return nil
        case .ignored(let ids, let copy):
            return (
                "Some \(peers) have a bad id or key; they are ignored and must pair again",
                ["file": path, "ignored": ids.joined(separator: ", "), "copyKeptAs": copy ?? "(could not keep a copy)"])
        case .keptAside(let keptAs, let reason):
            return (
                "The list of \(peers) could not be read; it was kept aside and the list starts empty. Pair them again, or repair the file and move it back while no program uses it.",
                ["file": path, "keptAs": keptAs, "reason": reason])
        }
    }

    /// The records, in pairing order.
    public var all: [Record] { records.withLock { $0 } }

    /// The record with `id`, if any.
    public func record(id: String) -> Record? {
        records.withLock { list in list.first { $0.id == id } }
    }

    /// Adds `record` at the end, replacing an earlier one with the same id (a peer that paired again).
    public func add(_ record: Record) throws {
        try change { list in
            list.removeAll { $0.id == record.id }
            list.append(record)
        }
    }

    /// Removes the record with `id`. Returns false when there was none.
    @discardableResult
    public func remove(id: String) throws -> Bool {
        var found = false
        try change { list in
            found = list.contains { $0.id == id }
            list.removeAll { $0.id == id }
        }
        return found
    }

    /// Changes the record with `id` in place (nothing happens when there is none).
    public func update(id: String, _ body: (inout Record) -> Void) throws {
        try change { list in
            guard let index = list.firstIndex(where: { $0.id == id }) else { return }
            body(&list[index])
        }
    }

    /// Applies `body` and writes the result (when it differs) before anyone sees it.
    private func change(_ body: (inout [Record]) -> Void) throws {
        guard let sharedDirectory else {
            try records.withLock { list in list = try write(body, to: list) }
            return
        }
        try DirectoryLock.withLock(sharedDirectory) {
            // Another program may have changed the file; never build on a file that does not parse.
            let current: [Record]
            switch try file?.read() {
            case .none: current = []
            case .some(.success(let stored)): current = stored.filter(isValid)
            case .some(.failure): current = all
            }
            let updated = try write(body, to: current)
            records.withLock { $0 = updated }
        }
    }

    private func write(_ body: (inout [Record]) -> Void, to list: [Record]) throws -> [Record] {
        var updated = list
        body(&updated)
        if updated != list { try file?.save(updated) }
        return updated
    }
}
