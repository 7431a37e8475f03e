#if canImport(Glibc)
import Glibc
#endif

/// Why the state in `.jobgraph/` cannot be used; SQLite's own failures arrive as `SQLiteError`.
public enum StateStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another process holds its pipeline's lock file (`.jobgraph/<file>.lock`); `pid` is the holder's, when it wrote it in time.
    case runLockHeld(pid: Int32?)
    /// `state.db` was written by a newer jobgraph with a schema this one does not know.
    case newerSchema(path: String, found: Int, supported: Int)
    /// A file-system call on a path in `.jobgraph/` failed with `errno`.
    case fileSystem(operation: String, path: String, errno: Int32)

    /// One line for the CLI to print; the run-lock case is what exit status 2 explains.
    public var description: String {
        switch self {
        case .runLockHeld(let pid?):
            "another jobgraph run (pid \(pid)) is using .jobgraph/; wait for it or pass --wait"
        case .runLockHeld(nil):
            "another jobgraph run is using .jobgraph/; wait for it or pass --wait"
        case .newerSchema(let path, let found, let supported):
            "'\(path)' has schema version \(found), but this jobgraph knows up to \(supported); "
                + "a newer jobgraph wrote it: run that one, or delete the file to start afresh (it is left as it is)"
        case .fileSystem(let operation, let path, let code):
            "cannot \(operation) '\(path)': \(String(cString: strerror(code)))"
        }
    }
}
