#if canImport(Glibc)
import Glibc
#endif

/// Why the cache could not read or keep something; never a task's failure (docs/cache.md).
public enum CacheError: Error, CustomStringConvertible, Sendable {
    /// A system call failed on `path`.
    case fileSystem(operation: String, path: String, errno: Int32)
    /// A blob's content does not have the SHA-256 it is stored under.
    case corruptBlob(String, origin: String)
    /// An output path that is not inside the task's folder (`/etc/x`, `../x`).
    case outsideFolder(String)
    /// An HTTP request failed.
    case remote(String)

    public var description: String {
        switch self {
        case .fileSystem(let operation, let path, let code):
            "cannot \(operation) '\(path)': \(String(cString: strerror(code)))"
        case .corruptBlob(let digest, let origin):
            "blob \(digest.prefix(12))… in the \(origin) cache does not match its SHA-256; not restored"
        case .outsideFolder(let path):
            "output '\(path)' is outside the task's folder"
        case .remote(let message):
            message
        }
    }
}
