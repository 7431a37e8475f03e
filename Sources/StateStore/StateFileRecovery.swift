#if canImport(Glibc)
import Glibc
#endif
internal import CSQLite
import Foundation

/// What happened to a `state.db` that was not a usable database: it was moved aside and a fresh one made
/// (issue 15: "The state is a cache plus a history", so losing it costs a rebuild, never the run).
public struct StateFileRecovery: Sendable, Equatable, CustomStringConvertible {
    /// The damaged file's path.
    public var original: String
    /// Where it now is: `state.db.corrupt-<UTC timestamp>`, with its `-wal` and `-shm` beside it.
    public var movedTo: String
    /// SQLite's reason: "file is not a database", or quick_check's first problem.
    public var reason: String

    /// One line for the CLI to print as a warning.
    public var description: String {
        Self.unusable(original, reason: reason) + "; moved it to '\(movedTo)' and started a fresh one, so every task will run"
    }

    /// How a damaged state file is named to the user, by a run that moves it aside and by a dry run that
    /// only reads it.
    public static func unusable(_ path: String, reason: String) -> String {
        "'\(path)' is not a usable database (\(reason))"
    }

    /// Checks an existing state file without changing it: a read-only connection neither switches the
    /// journal mode nor checkpoints when it closes, so a file this jobgraph refuses is left as it was.
    /// - Throws: `StateStoreError.newerSchema` for a newer jobgraph's file; `SQLiteError` with
    ///   `isCorruption` for a file that is not a database or fails `PRAGMA quick_check`.
    static func vet(_ path: String) throws {
        guard FileStatus(path: path) != nil else { return }
        let database = try SQLiteDatabase(location: .path(path), readOnly: true)
        let version = try database.userVersion()
        if version > StateSchema.currentVersion {
            throw StateStoreError.newerSchema(path: path, found: version, supported: StateSchema.currentVersion)
        }
        let problems = try database.quickCheck()
        guard problems == ["ok"] else {
            throw SQLiteError(code: SQLITE_CORRUPT, message: "quick_check: " + (problems.first ?? "no answer"))
        }
    }

    /// Renames `path` and its `-wal` and `-shm` to `path.corrupt-<timestamp>…`, choosing a name not yet taken.
    /// - Throws: `StateStoreError.fileSystem` when the file cannot be renamed.
    static func moveAside(_ path: String, reason: String, now: Date) throws -> StateFileRecovery {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let stem = path + ".corrupt-" + formatter.string(from: now)
        var target = stem
        var number = 1
        while FileStatus(path: target) != nil {
            number += 1
            target = stem + "-\(number)"
        }
        guard rename(path, target) == 0 else { throw StateStoreError.fileSystem(operation: "move aside", path: path, errno: errno) }
        for suffix in ["-wal", "-shm"] where FileStatus(path: path + suffix) != nil {
            // A log left behind would be replayed into the fresh database, so it goes too.
            guard rename(path + suffix, target + suffix) == 0 || errno == ENOENT else {
                throw StateStoreError.fileSystem(operation: "move aside", path: path + suffix, errno: errno)
            }
        }
        return StateFileRecovery(original: path, movedTo: target, reason: reason)
    }
}

extension SQLiteError {
    /// Whether the file is damaged or not SQLite at all, as opposed to busy, full or unreadable.
    public var isCorruption: Bool { code & 0xFF == SQLITE_CORRUPT || code & 0xFF == SQLITE_NOTADB }
}
