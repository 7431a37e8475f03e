import Foundation
import Testing
@testable import StateStore

@Suite struct SQLiteDatabaseTests {
    @Test func bindsAndReadsEveryStorageClass() throws {
        let database = try SQLiteDatabase(location: .memory)
        try database.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n TEXT)")
        try database.run("INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5)",
                         [.integer(Int64.min), .real(0.25), .text("héllo \u{0}zero"), .blob([0, 1, 255]), .null])
        let rows = try database.query("SELECT i, r, s, b, n FROM t") { row in (0..<5).map { row.value(Int32($0)) } }
        #expect(rows == [[.integer(Int64.min), .real(0.25), .text("héllo \u{0}zero"), .blob([0, 1, 255]), .null]])
    }

    @Test func errorsCarryTheCodeSQLitesMessageAndTheStatement() throws {
        let database = try SQLiteDatabase(location: .memory)
        let error = try #require(throws: SQLiteError.self) { try database.run("SELECT * FROM missing") }
        #expect(error.code == 1)  // SQLITE_ERROR
        #expect(error.message == "no such table: missing")
        #expect(error.sql == "SELECT * FROM missing")
        #expect(error.description == "SQLite error 1: no such table: missing (in: SELECT * FROM missing)")
    }

    @Test func constraintViolationsReportTheExtendedCode() throws {
        let database = try SQLiteDatabase(location: .memory)
        try database.execute("CREATE TABLE t (k TEXT PRIMARY KEY)")
        try database.run("INSERT INTO t VALUES ('a')")
        let error = try #require(throws: SQLiteError.self) { try database.run("INSERT INTO t VALUES ('a')") }
        #expect(error.code == 1555)  // SQLITE_CONSTRAINT_PRIMARYKEY
        #expect(error.message.contains("UNIQUE constraint failed: t.k"))
    }

    @Test func withStatementFinalizesItsStatement() throws {
        let database = try SQLiteDatabase(location: .memory)
        var escaped: SQLiteStatement?
        let rows = try database.withStatement("SELECT 1") { statement throws(SQLiteError) in
            escaped = statement
            return try statement.step()
        }
        #expect(rows)
        let statement = try #require(escaped)
        try statement.finalize()  // again: harmless
        let error = try #require(throws: SQLiteError.self) { try statement.step() }
        #expect(error.code == 21)  // SQLITE_MISUSE
    }

    @Test func withStatementPrefersTheBodysError() throws {
        struct Marker: Error {}
        let database = try SQLiteDatabase(location: .memory)
        let error = try #require(throws: SQLiteError.self) {
            try database.withStatement("SELECT 1") { _ throws(SQLiteError) in
                throw SQLiteError(code: 99, message: "from the body")
            }
        }
        #expect(error.message == "from the body")
    }

    @Test func aFailingTransactionLeavesNothingBehind() throws {
        let database = try SQLiteDatabase(location: .memory)
        try database.execute("CREATE TABLE t (k TEXT PRIMARY KEY)")
        #expect(throws: SQLiteError.self) {
            try database.transaction { () throws(SQLiteError) in
                try database.run("INSERT INTO t VALUES ('first')")
                try database.run("INSERT INTO t VALUES ('first')")
            }
        }
        #expect(try database.query("SELECT count(*) FROM t") { $0.integer(0) } == [0])
        try database.transaction { () throws(SQLiteError) in try database.run("INSERT INTO t VALUES ('second')") }
        #expect(try database.query("SELECT k FROM t") { $0.text(0) } == ["second"])
    }

    @Test func aFileDatabaseIsInWALModeWithForeignKeysOn() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try SQLiteDatabase(location: .path(directory.path + "/db"))
        #expect(try database.query("PRAGMA journal_mode") { $0.text(0) } == ["wal"])
        #expect(try database.query("PRAGMA synchronous") { $0.integer(0) } == [1])  // NORMAL
        #expect(try database.query("PRAGMA foreign_keys") { $0.integer(0) } == [1])
        #expect(try database.integrityCheck() == ["ok"])
    }

    @Test func anUnopenableLocationThrows() {
        let error = #expect(throws: SQLiteError.self) { try SQLiteDatabase(location: .path("/nonexistent-folder/for/sure/db")) }
        #expect(error?.code == 14)  // SQLITE_CANTOPEN
    }
}

@Suite struct SQLiteStatementCacheTests {
    @Test func aCachedStatementIsResetBetweenUsesAndNestedUsesGetTheirOwn() throws {
        let database = try SQLiteDatabase(location: .memory)
        try database.execute("CREATE TABLE t (k INTEGER)")
        for value in 1...3 { try database.run("INSERT INTO t VALUES (?1)", [.integer(Int64(value))]) }
        let sql = "SELECT k FROM t WHERE k >= ?1 ORDER BY k"
        #expect(try database.query(sql, [.integer(2)]) { $0.integer(0) } == [2, 3])
        #expect(try database.query(sql, [.integer(1)]) { $0.integer(0) } == [1, 2, 3])
        let pairs = try database.withCachedStatement(sql) { outer throws(SQLiteError) -> [[Int64]] in
            try outer.bind([.integer(3)])
            var pairs: [[Int64]] = []
            while try outer.step() {
                let key = outer.integer(0)
                pairs.append([key] + (try database.query(sql, [.integer(2)]) { $0.integer(0) }))
            }
            return pairs
        }
        #expect(pairs == [[3, 2, 3]])
        // A failed step leaves the statement usable for the next call.
        try database.execute("CREATE TABLE u (k INTEGER PRIMARY KEY)")
        try database.run("INSERT INTO u VALUES (?1)", [.integer(1)])
        #expect(throws: SQLiteError.self) { try database.run("INSERT INTO u VALUES (?1)", [.integer(1)]) }
        try database.run("INSERT INTO u VALUES (?1)", [.integer(2)])
        #expect(try database.query("SELECT count(*) FROM u") { $0.integer(0) } == [2])
    }
}
