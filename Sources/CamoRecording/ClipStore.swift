import CamoEvents
import Foundation
import Glibc
import Logging
import Synchronization

/// Why the store refused.
public struct ClipStoreError: Error, CustomStringConvertible, Sendable {
    /// What went wrong and what to do.
    public var description: String
}

/// The recordings on disk: a directory of clips (and stills) with an SQLite index, bounded in size, oldest first out.
///
/// - **Crash-safe.** A recording is written to a `.partial` file; ``commit(partial:record:)`` syncs it, renames it to
///   its name, syncs the directory, and only then adds its row. Eviction removes the row first, then the file. So a
///   crash leaves either a complete clip or none, and the index never names a missing file: at open, `.partial` files
///   are removed, rows whose file is gone are removed, and files no row names (a crash between rename and row) are
///   removed; ``recovery`` says how many of each.
/// - **Bounded.** The committed files never take more than ``capBytes``: a commit first removes the oldest until the
///   new one fits, and ``makeRoom(for:)`` lets the writer reserve room for a clip before it starts. A recording
///   larger than the whole cap is refused.
/// - Thread-safe: one lock around the index.
public final class ClipStore: Sendable {
    /// What opening found and repaired.
    public struct Recovery: Sendable, Hashable, Codable {
        /// `.partial` files (recordings cut short) removed.
        public var partialFilesRemoved = 0
        /// Rows whose file was gone, removed.
        public var rowsWithoutFileRemoved = 0
        /// Files no row named, removed.
        public var filesWithoutRowRemoved = 0
        /// Nothing repaired.
        public init() {}
    }

    /// The directory of the files and the index.
    public let directory: String
    /// The most the files may take, bytes.
    public let capBytes: Int64
    /// What opening repaired.
    public let recovery: Recovery

    private struct State {
        var database: SQLiteDatabase
        var evicted = 0
    }
    private let state: Mutex<State>
    private let logger: Logger

    /// The index's file name in ``directory``.
    public static let indexName = "index.sqlite"
    /// The suffix of a recording still being written.
    public static let partialSuffix = ".partial"

    /// Opens (or creates) the store in `directory` with a size cap, repairing what a crash left.
    /// - Throws: ``ClipStoreError`` when the directory cannot be made or the index cannot be opened.
    public init(directory: String, capBytes: Int64, logger: Logger) throws(ClipStoreError) {
        guard capBytes >= 1 << 20 else { throw ClipStoreError(description: "the recordings' size cap must be at least 1 MB (got \(capBytes) bytes)") }
        self.directory = directory
        self.capBytes = capBytes
        self.logger = logger
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw ClipStoreError(description: "cannot create the recordings directory \(directory): \(error.localizedDescription); check its parent's owner and permissions")
        }
        let database: SQLiteDatabase
        do {
            database = try SQLiteDatabase(path: directory + "/" + Self.indexName)
            try database.execute("""
                CREATE TABLE IF NOT EXISTS clip (
                    id INTEGER PRIMARY KEY AUTOINCREMENT, file TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, mode TEXT NOT NULL,
                    trigger TEXT, zone INTEGER, events TEXT NOT NULL, start REAL NOT NULL, preroll REAL, duration REAL NOT NULL,
                    bytes INTEGER NOT NULL, audio INTEGER NOT NULL, reason TEXT, width INTEGER NOT NULL, height INTEGER NOT NULL)
                """)
            recovery = try Self.repair(database: database, directory: directory)
        } catch {
            throw ClipStoreError(description: "\(error); move the recordings directory \(directory) aside to start a new one")
        }
        state = Mutex(State(database: database))
        if recovery != Recovery() {
            logger.notice("The recordings were repaired after a crash", metadata: [
                "partialFilesRemoved": "\(recovery.partialFilesRemoved)", "rowsWithoutFileRemoved": "\(recovery.rowsWithoutFileRemoved)",
                "filesWithoutRowRemoved": "\(recovery.filesWithoutRowRemoved)",
            ])
        }
    }

    /// A new `.partial` path for a recording with the file extension `ext` (`mp4`, `jpg`).
    public func partialPath(ext: String) -> String {
        let stamp = Int(Date().timeIntervalSince1970)
        let tag = UUID().uuidString.prefix(8).lowercased()
        return "\(directory)/\(stamp)-\(tag).\(ext)\(Self.partialSuffix)"
    }

    /// Removes a recording that will not be kept (a failed write).
    public func discard(partial: String) {
        unlink(partial)
    }

    /// Keeps the recording written at `partial`: synced, renamed to its name, then indexed; the oldest go first when
    /// it would not fit. Returns the record as stored.
    /// - Throws: ``ClipStoreError`` when the file is larger than the whole cap (it is removed), or cannot be synced,
    ///   renamed or indexed (then it is removed too).
    public func commit(partial: String, record: ClipRecord) throws(ClipStoreError) -> ClipRecord {
        guard partial.hasSuffix(Self.partialSuffix), partial.hasPrefix(directory + "/") else {
            throw ClipStoreError(description: "\(partial) is not one of this store's partial files")
        }
        let final = String(partial.dropLast(Self.partialSuffix.count))
        var stored = record
        stored.file = (final as NSString).lastPathComponent
        do throws(ClipStoreError) {
            // Recordings are private: owner only, whatever the umask.
            guard chmod(partial, 0o600) == 0 else { throw ClipStoreError(description: "cannot set the permissions of \(partial): \(String(cString: strerror(errno)))") }
            try Self.sync(path: partial)
            var info = stat()
            guard stat(partial, &info) == 0 else { throw ClipStoreError(description: "cannot read the size of \(partial): \(String(cString: strerror(errno)))") }
            stored.bytes = Int64(info.st_size)
            guard stored.bytes <= capBytes else {
                throw ClipStoreError(description: "the recording takes \(stored.bytes) bytes, more than the whole cap of \(capBytes); raise the recordings' size cap or shorten the clips")
            }
            try makeRoom(for: stored.bytes)
            guard rename(partial, final) == 0 else { throw ClipStoreError(description: "cannot rename \(partial): \(String(cString: strerror(errno)))") }
            try Self.sync(path: directory)
        } catch {
            unlink(partial)
            throw error
        }
        do {
            return try state.withLock { state throws(SQLiteError) in
                try state.database.execute(
                    "INSERT INTO clip (file, kind, mode, trigger, zone, events, start, preroll, duration, bytes, audio, reason, width, height) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    Self.values(stored))
                stored.id = state.database.lastInsertID
                return stored
            }
        } catch {
            unlink(final)
            throw ClipStoreError(description: "cannot index \(stored.file): \(error)")
        }
    }

    /// Removes the oldest recordings until `bytes` more fit under the cap (a writer reserving room for a clip).
    public func makeRoom(for bytes: Int64) throws(ClipStoreError) {
        let removed: [String]
        do {
            removed = try state.withLock { state throws(SQLiteError) -> [String] in
                var total = try Self.total(state.database)
                var files: [String] = []
                while total + bytes > capBytes {
                    let rows = try state.database.execute("SELECT id, file, bytes FROM clip ORDER BY id LIMIT 1")
                    guard let row = rows.first, let id = row[0].integer, let file = row[1].text, let size = row[2].integer else { break }
                    try state.database.execute("DELETE FROM clip WHERE id = ?", [.integer(id)])
                    files.append(file)
                    total -= size
                    state.evicted += 1
                }
                return files
            }
        } catch {
            throw ClipStoreError(description: "cannot make room in the recordings' index: \(error)")
        }
        for file in removed { unlink(directory + "/" + file) }
        if !removed.isEmpty { logger.info("Removed the oldest recordings to stay under the cap", metadata: ["count": "\(removed.count)"]) }
    }

    /// The recordings, newest first, at most `limit`.
    public func list(limit: Int = 1_000) -> [ClipRecord] {
        let rows = (try? state.withLock { state throws(SQLiteError) in
            try state.database.execute("SELECT * FROM clip ORDER BY id DESC LIMIT ?", [.integer(Int64(max(0, limit)))])
        }) ?? []
        return rows.compactMap(Self.record)
    }

    /// At most `limit` recordings with an id below `before`, newest first.
    public func list(before: Int64, limit: Int) -> [ClipRecord] {
        let rows = (try? state.withLock { state throws(SQLiteError) in
            try state.database.execute(
                "SELECT * FROM clip WHERE id < ? ORDER BY id DESC LIMIT ?", [.integer(before), .integer(Int64(max(0, limit)))])
        }) ?? []
        return rows.compactMap(Self.record)
    }

    /// The recording with `id`, if it is kept.
    public func record(id: Int64) -> ClipRecord? {
        let rows = (try? state.withLock { state throws(SQLiteError) in
            try state.database.execute("SELECT * FROM clip WHERE id = ?", [.integer(id)])
        }) ?? []
        return rows.first.flatMap(Self.record)
    }

    /// How many recordings are kept.
    public var count: Int {
        Int((try? state.withLock { state throws(SQLiteError) in
            try state.database.execute("SELECT COUNT(*) FROM clip").first?.first?.integer
        }) ?? 0)
    }

    /// The path of a kept recording's file.
    public func path(of record: ClipRecord) -> String { directory + "/" + record.file }

    /// The bytes the kept recordings take.
    public var totalBytes: Int64 { (try? state.withLock { state throws(SQLiteError) in try Self.total(state.database) }) ?? 0 }

    /// Recordings removed to stay under the cap since the store opened.
    public var evicted: Int { state.withLock { $0.evicted } }

    // MARK: - Rows

    private static func total(_ database: SQLiteDatabase) throws(SQLiteError) -> Int64 {
        try database.execute("SELECT COALESCE(SUM(bytes), 0) FROM clip").first?.first?.integer ?? 0
    }

    private static func values(_ record: ClipRecord) -> [SQLiteValue] {
        [
            .text(record.file), .text(record.kind.rawValue), .text(record.mode.rawValue), record.trigger.map { .text($0.rawValue) } ?? .null,
            record.zoneID.map { .integer(Int64($0)) } ?? .null, .text(record.eventIDs.map(String.init).joined(separator: ",")),
            .real(record.startTime), record.preRollSeconds.map { .real($0) } ?? .null, .real(record.durationSeconds),
            .integer(record.bytes), .integer(record.hasAudio ? 1 : 0), record.endReason.map { .text($0.rawValue) } ?? .null,
            .integer(Int64(record.width)), .integer(Int64(record.height)),
        ]
    }

    private static func record(_ row: [SQLiteValue]) -> ClipRecord? {
        guard row.count == 15, let id = row[0].integer, let file = row[1].text, let kind = row[2].text.flatMap(ClipRecord.Kind.init),
            let mode = row[3].text.flatMap(RecordingMode.init), let start = row[7].real, let duration = row[9].real,
            let bytes = row[10].integer, let audio = row[11].integer, let width = row[13].integer, let height = row[14].integer
        else { return nil }
        var record = ClipRecord(
            kind: kind, mode: mode, trigger: row[4].text.flatMap(EventTrigger.init), zoneID: row[5].integer.flatMap { UInt16(exactly: $0) },
            eventIDs: (row[6].text ?? "").split(separator: ",").compactMap { UInt64($0) }, startTime: start, preRollSeconds: row[8].real,
            durationSeconds: duration, hasAudio: audio != 0, endReason: row[12].text.flatMap(ClipEndReason.init), width: Int(width),
            height: Int(height))
        record.id = id
        record.file = file
        record.bytes = bytes
        return record
    }

    // MARK: - Repair

    private static func repair(database: SQLiteDatabase, directory: String) throws(SQLiteError) -> Recovery {
        var recovery = Recovery()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names where name.hasSuffix(partialSuffix) {
            if unlink(directory + "/" + name) == 0 { recovery.partialFilesRemoved += 1 }
        }
        var indexed = Set<String>()
        for row in try database.execute("SELECT id, file FROM clip") {
            guard let id = row[0].integer, let file = row[1].text else { continue }
            if access(directory + "/" + file, F_OK) == 0 {
                indexed.insert(file)
            } else {
                try database.execute("DELETE FROM clip WHERE id = ?", [.integer(id)])
                recovery.rowsWithoutFileRemoved += 1
            }
        }
        for name in names where !name.hasSuffix(partialSuffix) && !name.hasPrefix(indexName) && !indexed.contains(name) {
            // Only what the store writes: NAME.mp4 and NAME.jpg.
            guard name.hasSuffix(".mp4") || name.hasSuffix(".jpg") else { continue }
            if unlink(directory + "/" + name) == 0 { recovery.filesWithoutRowRemoved += 1 }
        }
        return recovery
    }

    /// fsync of a file or directory.
    private static func sync(path: String) throws(ClipStoreError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ClipStoreError(description: "cannot open \(path) to sync it: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw ClipStoreError(description: "cannot sync \(path): \(String(cString: strerror(errno))) (is the disk full or failing?)") }
    }
}
