internal import CSQLite

/// A failed SQLite call: its result code, SQLite's own message, and the SQL being run, if any.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The extended result code (`SQLITE_BUSY`, `SQLITE_CORRUPT` …), as SQLite numbers them.
    public var code: Int32
    /// `sqlite3_errmsg` at the time of the failure.
    public var message: String
    /// The statement that failed, when the failure belongs to one.
    public var sql: String?

    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// A use of a store after `StateStore.close()`.
    static let closed = SQLiteError(code: SQLITE_MISUSE, message: "the state file is closed")

    /// Whether another connection held a lock longer than the busy timeout.
    public var isBusy: Bool { code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED }

    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let sql { text += " (in: \(sql))" }
        return text
    }
}

/// The one place result codes become errors: `SQLITE_OK`, `SQLITE_ROW` and `SQLITE_DONE` pass through.
@discardableResult
func check(_ code: Int32, _ connection: OpaquePointer?, sql: String? = nil) throws(SQLiteError) -> Int32 {
    switch code {
    case SQLITE_OK, SQLITE_ROW, SQLITE_DONE:
        return code
    default:
        // sqlite3_errmsg describes the connection's latest failure; without a connection, the code's text.
        let message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(code))
        let extended = connection.map { sqlite3_extended_errcode($0) } ?? code
        throw SQLiteError(code: extended, message: message, sql: sql)
    }
}
