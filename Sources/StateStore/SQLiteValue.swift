/// A value bound to a statement parameter or read from a column, in SQLite's five storage classes.
enum SQLiteValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

extension SQLiteValue {
    /// `.null` for `nil`, else the text.
    static func text(_ value: String?) -> SQLiteValue { value.map { .text($0) } ?? .null }
    /// `.null` for `nil`, else the number.
    static func integer(_ value: Int64?) -> SQLiteValue { value.map { .integer($0) } ?? .null }
    /// `.null` for `nil`, else the number.
    static func real(_ value: Double?) -> SQLiteValue { value.map { .real($0) } ?? .null }
}

/// Where a database lives.
enum SQLiteLocation: Sendable, Equatable {
    /// A file, created when missing.
    case path(String)
    /// A private in-memory database, gone when the connection closes: for tests.
    case memory

    var filename: String {
        switch self {
        case .path(let path): path
        case .memory: ":memory:"
        }
    }
}
