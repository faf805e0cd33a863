// An open SQLite connection with its prepared statements kept for reuse.
//
// Written by hand on purpose: SQLiteNIO (the SQLite driver under SQLiteKit) prepares every
// statement afresh and runs each call on a thread pool, answering through an event loop — three
// thread hand-offs per statement, which a profile of the token endpoint showed as the largest
// single cost. SQLite calls take microseconds, so this connection runs them in the caller, under
// a lock, and keeps each statement prepared. It calls the same SQLite library SQLiteNIO bundles.
import VaporCSQLite

/// What SQLite reported when a call failed.
public struct SQLiteFailure: Error, CustomStringConvertible {
    /// SQLite's (extended) result code.
    public let code: Int32
    /// SQLite's message for it.
    public let message: String

    public var description: String { "SQLite error \(code): \(message)" }

    /// Whether another connection's lock refused the call (`SQLITE_BUSY`, any extended code).
    var isBusy: Bool { code & 0xFF == SQLITE_BUSY }

    /// `SQLITE_BUSY_SNAPSHOT`: a transaction's read snapshot is too old to write from. Waiting
    /// cannot cure it (only ending the transaction can), so it is not retried.
    var isStaleSnapshot: Bool { code == SQLITE_BUSY | (2 << 8) }
}

/// The rows a statement returned: the column names once, the values row by row.
struct SQLiteResult: Sendable {
    var columns: SQLiteColumns
    var rows: [[SQLiteValue]] = []
}

/// The column names of one prepared statement, shared by all its rows.
final class SQLiteColumns: Sendable {
    let names: [String]
    init(names: [String]) { self.names = names }

    /// The index of `name`; a linear scan, quicker than hashing for the few columns a query selects.
    func index(of name: String) -> Int? { names.firstIndex(of: name) }
}

/// One `sqlite3*` and its statement cache. Not thread-safe: ``InlineSQLiteDatabase`` holds it under a lock.
final class SQLiteConnectionHandle {
    private var handle: OpaquePointer?
    private var statements: [String: PreparedStatement] = [:]
    /// More distinct SQL texts than this (such as `IN` lists of many lengths) empty the cache.
    private let statementLimit = 256

    private struct PreparedStatement {
        let pointer: OpaquePointer
        let columns: SQLiteColumns
        let isReadOnly: Bool
    }

    /// Opens (creating if needed) the file at `path`, with `settings` (`PRAGMA` statements) applied.
    init(path: String, settings: [String]) throws {
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        var opened: OpaquePointer?
        let result = sqlite_nio_sqlite3_open_v2(path, &opened, flags, nil)
        guard result == SQLITE_OK, let opened else {
            let failure = SQLiteFailure(
                code: result, message: opened.map { String(cString: sqlite_nio_sqlite3_errmsg($0)) } ?? "cannot open the file")
            sqlite_nio_sqlite3_close(opened)
            throw failure
        }
        handle = opened
        sqlite_nio_sqlite3_extended_result_codes(opened, 1)
        do {
            for setting in settings { try execute(setting) }
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Finalizes the statements and closes the connection; later calls fail.
    func close() {
        for statement in statements.values { sqlite_nio_sqlite3_finalize(statement.pointer) }
        statements.removeAll()
        if let handle { sqlite_nio_sqlite3_close_v2(handle) }
        handle = nil
    }

    /// Runs a statement without binds or rows (transaction control, settings).
    func execute(_ sql: String) throws {
        _ = try step(sql, binds: [])
    }

    /// Flushes the write-ahead log to disk (what `synchronous=FULL` does at every commit), so
    /// every commit made so far survives a power loss. The connection opens the log at its first read.
    func syncLog() throws {
        guard let handle else { throw SQLiteFailure(code: SQLITE_MISUSE, message: "the connection is closed") }
        var file: UnsafeMutablePointer<sqlite3_file>?
        try check(sqlite_nio_sqlite3_file_control(handle, "main", SQLITE_FCNTL_JOURNAL_POINTER, &file))
        guard let file, let methods = file.pointee.pMethods, let sync = methods.pointee.xSync else {
            // Never report a flush that did not happen.
            throw SQLiteFailure(code: SQLITE_MISUSE, message: "the write-ahead log is not open on this connection")
        }
        try check(sync(file, SQLITE_SYNC_NORMAL))
    }

    /// Copies the whole write-ahead log into the database, syncs it and empties the log
    /// (`sqlite3_wal_checkpoint_v2`, truncating). SQLite answers `SQLITE_BUSY` unless every frame
    /// was copied and the log emptied (a reader on an older snapshot, another process's lock).
    func checkpointCompletely() throws(SQLiteFailure) {
        guard let handle else { throw SQLiteFailure(code: SQLITE_MISUSE, message: "the connection is closed") }
        let result = sqlite_nio_sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
        guard result == SQLITE_OK else { throw failure(result) }
    }

    /// Copies what it can of the write-ahead log into the database without waiting for anyone
    /// (`sqlite3_wal_checkpoint_v2`, passive). Another process's checkpoint running at the same
    /// moment is not an error: that one copies.
    func checkpointPassively() throws(SQLiteFailure) {
        guard let handle else { throw SQLiteFailure(code: SQLITE_MISUSE, message: "the connection is closed") }
        let result = sqlite_nio_sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        guard result == SQLITE_OK || result & 0xFF == SQLITE_BUSY else { throw failure(result) }
    }

    /// How many times SQLite has prepared this connection's cached statements again (after a
    /// schema change, or when a statement's plan depends on the values bound), for tests.
    var repreparations: Int {
        statements.values.reduce(0) { $0 + Int(sqlite_nio_sqlite3_stmt_status($1.pointer, SQLITE_STMTSTATUS_REPREPARE, 0)) }
    }

    /// Whether the connection is open (not yet closed).
    var isOpen: Bool { handle != nil }

    /// Whether no transaction is open (SQLite ends one by itself after some errors).
    var isAutocommit: Bool { handle.map { sqlite_nio_sqlite3_get_autocommit($0) != 0 } ?? true }

    /// Whether `sql` only reads (SQLite's own verdict on the prepared statement). Transaction
    /// control counts as reading, so callers route `BEGIN` and `COMMIT` themselves.
    func isReadOnly(_ sql: String) throws -> Bool {
        try prepared(sql).isReadOnly
    }

    /// What `sql` is, by SQLite's verdict on the prepared statement (not by its text).
    enum StatementKind {
        /// Only reads and answers columns: a query, safe on any connection.
        case query
        /// Writes (`INSERT`, `UPDATE`, `DELETE`, with or without `RETURNING`).
        case write
        /// Only reads by SQLite's verdict yet answers no column: transaction control, `ATTACH`,
        /// a setting. Never run through the shared database.
        case control
    }

    /// The ``StatementKind`` of `sql`.
    func kind(of sql: String) throws -> StatementKind {
        let statement = try prepared(sql)
        guard statement.isReadOnly else { return .write }
        return statement.columns.names.isEmpty ? .control : .query
    }

    /// Runs one statement with `binds` and returns its rows.
    ///
    /// - Parameter mayOpenTransaction: whether the statement may leave a transaction open (a
    ///   migration's own `BEGIN`); otherwise such a statement is rolled back and refused, since the
    ///   connection is shared and every later statement would run inside that transaction.
    func run(_ sql: String, binds: [SQLiteValue], mayOpenTransaction: Bool = false) throws -> SQLiteResult {
        let result = try step(sql, binds: binds)
        if !mayOpenTransaction, !isAutocommit {
            try? execute("ROLLBACK")
            throw SQLiteFailure(code: SQLITE_MISUSE, message: "a statement left a transaction open on a shared connection; it was rolled back")
        }
        return result
    }

    private func step(_ sql: String, binds: [SQLiteValue]) throws -> SQLiteResult {
        let statement = try prepared(sql)
        defer {
            sqlite_nio_sqlite3_reset(statement.pointer)
            sqlite_nio_sqlite3_clear_bindings(statement.pointer)
        }
        for (offset, value) in binds.enumerated() {
            try check(bind(value, at: Int32(offset + 1), in: statement.pointer))
        }
        var result = SQLiteResult(columns: statement.columns)
        let columnCount = Int32(statement.columns.names.count)
        while true {
            let step = sqlite_nio_sqlite3_step(statement.pointer)
            if step == SQLITE_DONE { return result }
            guard step == SQLITE_ROW else { throw failure(step) }
            var row: [SQLiteValue] = []
            row.reserveCapacity(Int(columnCount))
            for column in 0..<columnCount { row.append(value(at: column, of: statement.pointer)) }
            result.rows.append(row)
        }
    }

    private func prepared(_ sql: String) throws -> PreparedStatement {
        if let cached = statements[sql] { return cached }
        guard let handle else { throw SQLiteFailure(code: SQLITE_MISUSE, message: "the connection is closed") }
        var pointer: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        let result = sql.withCString { text in
            let prepared = sqlite_nio_sqlite3_prepare_v3(handle, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &pointer, &tail)
            // Text after the first statement would be silently ignored: refuse it instead.
            if prepared == SQLITE_OK, let tail, tail.pointee != 0, !String(cString: tail).allSatisfy(\.isWhitespace) {
                return SQLITE_MISUSE
            }
            return prepared
        }
        guard result == SQLITE_OK, let pointer else {
            if let pointer { sqlite_nio_sqlite3_finalize(pointer) }
            throw result == SQLITE_MISUSE ? SQLiteFailure(code: result, message: "one statement at a time") : failure(result)
        }
        let count = sqlite_nio_sqlite3_column_count(pointer)
        let names = (0..<count).map { String(cString: sqlite_nio_sqlite3_column_name(pointer, $0)) }
        let statement = PreparedStatement(
            pointer: pointer, columns: SQLiteColumns(names: names), isReadOnly: sqlite_nio_sqlite3_stmt_readonly(pointer) != 0)
        if statements.count >= statementLimit {
            for old in statements.values { sqlite_nio_sqlite3_finalize(old.pointer) }
            statements.removeAll(keepingCapacity: true)
        }
        statements[sql] = statement
        return statement
    }

    private func bind(_ value: SQLiteValue, at index: Int32, in statement: OpaquePointer) -> Int32 {
        switch value {
        case .null: return sqlite_nio_sqlite3_bind_null(statement, index)
        case .integer(let integer): return sqlite_nio_sqlite3_bind_int64(statement, index, integer)
        case .real(let real): return sqlite_nio_sqlite3_bind_double(statement, index, real)
        case .text(let text):
            return text.withCString { characters in
                sqlite_nio_sqlite3_bind_text64(statement, index, characters, UInt64(text.utf8.count), Self.transient, UInt8(SQLITE_UTF8))
            }
        case .blob(let bytes):
            return bytes.withUnsafeBytes { raw in
                sqlite_nio_sqlite3_bind_blob64(
                    statement, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), UInt64(raw.count), Self.transient)
            }
        }
    }

    private func value(at column: Int32, of statement: OpaquePointer) -> SQLiteValue {
        switch sqlite_nio_sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: return .integer(sqlite_nio_sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT: return .real(sqlite_nio_sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            guard let text = sqlite_nio_sqlite3_column_text(statement, column) else { return .text("") }
            let count = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
            guard count > 0, let bytes = sqlite_nio_sqlite3_column_blob(statement, column) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default: return .null
        }
    }

    private func check(_ result: Int32) throws {
        guard result == SQLITE_OK else { throw failure(result) }
    }

    private func failure(_ result: Int32) -> SQLiteFailure {
        SQLiteFailure(code: result, message: handle.map { String(cString: sqlite_nio_sqlite3_errmsg($0)) } ?? "the connection is closed")
    }

    /// SQLite copies the bound bytes (they live only for the call).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
