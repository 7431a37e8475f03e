internal import CSQLite

/// One SQLite connection, opened in WAL mode with `synchronous=NORMAL`, a busy timeout and foreign keys on.
///
/// Owns its `sqlite3` handle and closes it in `deinit`. Not thread-safe by itself: `StateStore` keeps it
/// in a `Locked` box, so one thread at a time uses it.
final class SQLiteDatabase {
    let location: SQLiteLocation
    private let connection: OpaquePointer
    /// Statements kept prepared between uses, by their SQL: a no-op run checks thousands of tasks with
    /// the same few statements, and compiling each anew would cost more than running it. A statement
    /// is taken out while in use, so a nested use of the same SQL prepares a second one.
    private var cache: [String: SQLiteStatement] = [:]
    /// Called once the connection has closed (a read-write one has then checkpointed its log into the file).
    var afterClose: (() -> Void)?

    /// Opens (creating when missing) the database at `location`.
    /// - Parameters:
    ///   - busyTimeout: milliseconds to wait for another connection's write lock before `SQLITE_BUSY`.
    ///   - readOnly: open an existing file only to read it, changing nothing (no WAL switch, and no
    ///     checkpoint when it closes).
    init(location: SQLiteLocation, busyTimeout: Int32 = 5_000, readOnly: Bool = false) throws(SQLiteError) {
        self.location = location
        var opened: OpaquePointer?
        // NOMUTEX: the Locked box already serializes every use, so SQLite's own mutex would be redundant.
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(location.filename, &opened, flags, nil)
        guard let opened else { throw SQLiteError(code: code, message: String(cString: sqlite3_errstr(code))) }
        connection = opened
        do throws(SQLiteError) {
            try check(code, opened)
            try check(sqlite3_extended_result_codes(opened, 1), opened)
            try check(sqlite3_busy_timeout(opened, busyTimeout), opened)
            if readOnly { return }
            // WAL: a writer killed mid-transaction leaves its frames uncommitted in the log, and readers
            // never block the writer. NORMAL syncs at checkpoints only: still consistent after kill -9
            // (the OS keeps written pages); a power cut may lose the last transactions, never corrupt.
            // Before WAL, which writes the file's first page: only a new file takes it, and its free pages
            // can then be given back without rewriting it (`StateStore.compactIfMostlyFree`). An older
            // file keeps its mode until that rewrites it.
            try execute("PRAGMA auto_vacuum = INCREMENTAL")
            if case .path = location {
                let mode = try query("PRAGMA journal_mode=WAL") { $0.text(0) }.first ?? ""
                guard mode.lowercased() == "wal" else {
                    throw SQLiteError(code: SQLITE_ERROR, message: "could not switch to WAL mode (journal mode is '\(mode)')")
                }
            }
            try execute("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
        } catch {
            sqlite3_close_v2(opened)
            throw error
        }
    }

    /// Whether `close()` has closed the connection: nothing may use it after.
    private(set) var isClosed = false

    /// Closes the connection now (a read-write one checkpoints its log into the file), then calls
    /// `afterClose`. Also done in `deinit`, which a process that exits with the store still referenced
    /// never reaches. Later calls do nothing.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        for statement in cache.values { try? statement.finalize() }  // nothing to report to here
        cache = [:]
        // close_v2 defers the close until every statement is finalized, so an order mistake cannot leak.
        let code = sqlite3_close_v2(connection)
        if code == SQLITE_OK { afterClose?() }
    }

    deinit { close() }

    /// Runs one or more `;`-separated statements that take no parameters, discarding any rows.
    func execute(_ sql: String) throws(SQLiteError) {
        try check(sqlite3_exec(connection, sql, nil, nil, nil), connection, sql: sql)
    }

    /// Prepares `sql`, hands it to `body`, and finalizes it afterwards whatever happens, preferring the
    /// body's error to the finalize error (as swift-system's `closeAfter`).
    func withStatement<Result>(_ sql: String, _ body: (SQLiteStatement) throws(SQLiteError) -> Result) throws(SQLiteError) -> Result {
        let statement = try SQLiteStatement(sql: sql, connection: connection)
        let result: Result
        do throws(SQLiteError) {
            result = try body(statement)
        } catch {
            try? statement.finalize()  // the body's error is the one worth reporting
            throw error
        }
        try statement.finalize()
        return result
    }

    /// Like `withStatement`, but keeps the statement prepared for the next use of the same SQL (reset,
    /// bindings cleared) instead of finalizing it; the database finalizes it when it closes.
    func withCachedStatement<Result>(_ sql: String, _ body: (SQLiteStatement) throws(SQLiteError) -> Result) throws(SQLiteError) -> Result {
        let statement: SQLiteStatement
        if let cached = cache.removeValue(forKey: sql) {
            statement = cached
        } else {
            statement = try SQLiteStatement(sql: sql, connection: connection)
        }
        defer {
            if (try? statement.reset()) != nil { cache[sql] = statement }  // a statement that cannot reset is dropped
        }
        return try body(statement)
    }

    /// Runs one statement with `bindings` to completion.
    func run(_ sql: String, _ bindings: [SQLiteValue] = []) throws(SQLiteError) {
        try withCachedStatement(sql) { statement throws(SQLiteError) in
            try statement.bind(bindings)
            while try statement.step() {}
        }
    }

    /// Runs one statement with `bindings` and maps every row it returns.
    func query<Row>(_ sql: String, _ bindings: [SQLiteValue] = [], row: (SQLiteStatement) -> Row) throws(SQLiteError) -> [Row] {
        try withCachedStatement(sql) { statement throws(SQLiteError) in
            try statement.bind(bindings)
            var rows: [Row] = []
            while try statement.step() { rows.append(row(statement)) }
            return rows
        }
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back when it throws.
    ///
    /// IMMEDIATE takes the write lock up front, so two writers wait on the busy timeout at `BEGIN`
    /// rather than failing halfway with a lock upgrade that cannot be retried.
    func transaction<Result>(_ body: () throws(SQLiteError) -> Result) throws(SQLiteError) -> Result {
        try inTransaction(begin: "BEGIN IMMEDIATE", body)
    }

    /// Runs `body`, which only reads, inside one `BEGIN … COMMIT`: one snapshot for all its statements,
    /// and one round of file locks instead of one per statement.
    func readTransaction<Result>(_ body: () throws(SQLiteError) -> Result) throws(SQLiteError) -> Result {
        try inTransaction(begin: "BEGIN", body)
    }

    private func inTransaction<Result>(begin: String, _ body: () throws(SQLiteError) -> Result) throws(SQLiteError) -> Result {
        try run(begin)
        do throws(SQLiteError) {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            // A failed COMMIT may already have rolled back; ROLLBACK then fails harmlessly.
            try? run("ROLLBACK")
            throw error
        }
    }

    /// `PRAGMA user_version`: the schema version this program wrote.
    func userVersion() throws(SQLiteError) -> Int {
        try integerPragma("user_version")
    }

    /// The value of a pragma that reads as one integer (`page_count`, `auto_vacuum`); 0 when it reads nothing.
    func integerPragma(_ name: String) throws(SQLiteError) -> Int {
        Int(try query("PRAGMA \(name)") { $0.integer(0) }.first ?? 0)
    }

    func setUserVersion(_ version: Int) throws(SQLiteError) {
        try execute("PRAGMA user_version = \(version)")
    }

    /// The rowid of the latest successful INSERT on this connection.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(connection) }

    /// Rows changed by the latest INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(connection)) }

    /// `PRAGMA integrity_check`: `["ok"]` for a sound database, else one line per problem found.
    func integrityCheck() throws(SQLiteError) -> [String] {
        try query("PRAGMA integrity_check") { $0.text(0) }
    }

    /// `PRAGMA quick_check`: `["ok"]`, or SQLite's list of problems; the integrity check without the
    /// index-content comparison, so it costs one read of each page.
    func quickCheck() throws(SQLiteError) -> [String] {
        try query("PRAGMA quick_check") { $0.text(0) }
    }
}
