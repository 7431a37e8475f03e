internal import CSQLite

/// One prepared statement: bind parameters by 1-based index, step through rows, read columns.
///
/// Owns its `sqlite3_stmt`, finalized by `finalize()` or at the latest in `deinit`. Valid only inside the
/// `SQLiteDatabase.withStatement` body that receives it, and only on the thread running that body.
final class SQLiteStatement {
    let sql: String
    private var handle: OpaquePointer?
    /// The connection, for error messages; owned by the `SQLiteDatabase`, which outlives this statement.
    private let connection: OpaquePointer

    init(sql: String, connection: OpaquePointer) throws(SQLiteError) {
        self.sql = sql
        self.connection = connection
        var prepared: OpaquePointer?
        try check(sqlite3_prepare_v2(connection, sql, -1, &prepared, nil), connection, sql: sql)
        guard let prepared else {
            // An empty statement (only whitespace or a comment) compiles to nothing.
            throw SQLiteError(code: SQLITE_MISUSE, message: "no statement to prepare", sql: sql)
        }
        handle = prepared
    }

    deinit { sqlite3_finalize(handle) }

    /// Binds each value to the parameter of the same position, `values[0]` to `?1`.
    func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        for (offset, value) in values.enumerated() { try bind(value, at: Int32(offset + 1)) }
    }

    /// Binds one value to a 1-based parameter index.
    func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        let handle = try live()
        let code: Int32
        switch value {
        case .null: code = sqlite3_bind_null(handle, index)
        case .integer(let number): code = sqlite3_bind_int64(handle, index, number)
        case .real(let number): code = sqlite3_bind_double(handle, index, number)
        case .text(let text):
            // By length, not as a C string, so a NUL inside the text does not cut it short.
            var text = text
            code = text.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    // A nil pointer would bind NULL, not the empty string.
                    sqlite3_bind_text64(handle, index, chars.baseAddress ?? emptyText, sqlite3_uint64(chars.count),
                                        transientDestructor, UInt8(SQLITE_UTF8))
                }
            }
        case .blob(let bytes):
            code = bytes.withUnsafeBytes { buffer in
                sqlite3_bind_blob64(handle, index, buffer.baseAddress, sqlite3_uint64(buffer.count), transientDestructor)
            }
        }
        try check(code, connection, sql: sql)
    }

    /// Runs the statement to its next row: `true` when a row is available to read, `false` when done.
    @discardableResult
    func step() throws(SQLiteError) -> Bool {
        try check(sqlite3_step(try live()), connection, sql: sql) == SQLITE_ROW
    }

    /// Rewinds the statement and clears its bindings, ready to bind and step again.
    func reset() throws(SQLiteError) {
        let handle = try live()
        // sqlite3_reset repeats the last step's error, which that step already reported.
        sqlite3_reset(handle)
        try check(sqlite3_clear_bindings(handle), connection, sql: sql)
    }

    /// Releases the statement; later calls throw `SQLITE_MISUSE`. Safe to call twice.
    func finalize() throws(SQLiteError) {
        guard let handle else { return }
        self.handle = nil
        // sqlite3_finalize returns the last step's error again; that step already reported it.
        _ = sqlite3_finalize(handle)
    }

    // MARK: - Columns of the current row (0-based, as SQLite numbers them)

    func isNull(_ column: Int32) -> Bool { handle.map { sqlite3_column_type($0, column) == SQLITE_NULL } ?? true }

    func integer(_ column: Int32) -> Int64 { handle.map { sqlite3_column_int64($0, column) } ?? 0 }

    func optionalInteger(_ column: Int32) -> Int64? { isNull(column) ? nil : integer(column) }

    func real(_ column: Int32) -> Double { handle.map { sqlite3_column_double($0, column) } ?? 0 }

    func optionalReal(_ column: Int32) -> Double? { isNull(column) ? nil : real(column) }

    func text(_ column: Int32) -> String {
        guard let handle, let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }

    func blob(_ column: Int32) -> [UInt8] {
        guard let handle, let bytes = sqlite3_column_blob(handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// `body` applied to a text or blob column's bytes where SQLite holds them, without copying them;
    /// `nil` for NULL.
    func withBytes<Result>(_ column: Int32, _ body: (UnsafeRawBufferPointer) -> Result) -> Result? {
        guard let handle, !isNull(column) else { return nil }
        let bytes = sqlite3_column_blob(handle, column)
        return body(UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, column))))
    }

    func value(_ column: Int32) -> SQLiteValue {
        guard let handle else { return .null }
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer(integer(column))
        case SQLITE_FLOAT: return .real(real(column))
        case SQLITE_TEXT: return .text(text(column))
        case SQLITE_BLOB: return .blob(blob(column))
        default: return .null
        }
    }

    private func live() throws(SQLiteError) -> OpaquePointer {
        guard let handle else { throw SQLiteError(code: SQLITE_MISUSE, message: "statement already finalized", sql: sql) }
        return handle
    }
}

/// `SQLITE_TRANSIENT`: SQLite copies the bound bytes at once, so Swift's temporary buffers may go away.
/// The C macro is a cast of -1 to a function pointer, which Swift does not import.
private nonisolated(unsafe) let emptyText: UnsafePointer<CChar> = {
    // Never freed: one byte for the life of the process, read-only.
    let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
    pointer.initialize(to: 0)
    return UnsafePointer(pointer)
}()

private let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
