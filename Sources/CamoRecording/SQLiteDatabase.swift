import CSQLite

/// A value bound to, or read from, an SQL statement.
enum SQLiteValue: Sendable, Hashable {
    case integer(Int64)
    case real(Double)
    case text(String)
    case null
}

/// What SQLite refused, with its own message.
struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// SQLite's result code.
    var code: Int32
    /// What we were doing, and SQLite's message.
    var description: String
}

/// A thin wrapper over one SQLite connection (Debian's libsqlite3): open, run statements with bound values, read
/// rows. All C calls of the recordings live here. Owned by one thread at a time (the clip store's lock).
final class SQLiteDatabase {
    private var handle: OpaquePointer?
    let path: String

    /// Opens (or creates) the database at `path`, in WAL mode with full sync, so a committed row survives a crash and
    /// a transaction cut short by one leaves nothing.
    init(path: String) throws(SQLiteError) {
        self.path = path
        var opened: OpaquePointer?
        let result = sqlite3_open_v2(path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nil)
        handle = opened
        guard result == SQLITE_OK else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(opened)
            handle = nil
            throw SQLiteError(code: result, description: "opening the index \(path): \(message)")
        }
        sqlite3_busy_timeout(handle, 2_000)
        try execute("PRAGMA journal_mode=WAL")
        try execute("PRAGMA synchronous=FULL")
    }

    deinit {
        sqlite3_close(handle)
    }

    /// Runs `sql` with `values` bound to its `?` in order; returns every row, each as its columns' values.
    @discardableResult
    func execute(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> [[SQLiteValue]] {
        var statement: OpaquePointer?
        let prepared = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard prepared == SQLITE_OK, let statement else { throw error(prepared, "preparing \(sql)") }
        defer { sqlite3_finalize(statement) }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let bound: Int32
            switch value {
            case .integer(let number): bound = sqlite3_bind_int64(statement, index, number)
            case .real(let number): bound = sqlite3_bind_double(statement, index, number)
            case .text(let text): bound = camo_sqlite_bind_text(statement, index, text)
            case .null: bound = sqlite3_bind_null(statement, index)
            }
            guard bound == SQLITE_OK else { throw error(bound, "binding value \(index) of \(sql)") }
        }
        var rows: [[SQLiteValue]] = []
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { return rows }
            guard step == SQLITE_ROW else { throw error(step, "running \(sql)") }
            let columns = sqlite3_column_count(statement)
            rows.append((0..<columns).map { column in
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: .integer(sqlite3_column_int64(statement, column))
                case SQLITE_FLOAT: .real(sqlite3_column_double(statement, column))
                case SQLITE_NULL: .null
                default: .text(sqlite3_column_text(statement, column).map { String(cString: $0) } ?? "")
                }
            })
        }
    }

    /// The row id of the last insert.
    var lastInsertID: Int64 { sqlite3_last_insert_rowid(handle) }

    private func error(_ code: Int32, _ doing: String) -> SQLiteError {
        SQLiteError(code: code, description: "\(doing): \(String(cString: sqlite3_errmsg(handle))) (the index \(path))")
    }
}

extension SQLiteValue {
    var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }
    var real: Double? {
        switch self {
        case .real(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }
    var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }
}
