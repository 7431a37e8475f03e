#if canImport(Glibc)
import Glibc
#endif

/// The two system-call loops that writers of files all need, written once: the console, the event log,
/// a task's log, a download and a filter's output each had their own copy.
public enum FileCalls {
    /// Writes all of `bytes` to `descriptor`, in as many `write(2)` calls as it takes, again after a
    /// signal interrupts one.
    /// - Returns: `nil` once everything is written, else the error number: `write`'s, or `EIO` for a write
    ///   that wrote nothing (which `write` does not explain in `errno`).
    public static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32? {
        guard let base = bytes.baseAddress else { return nil }
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, base + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            if written == 0 { return EIO }
            offset += written
        }
        return nil
    }

    /// Creates `path` and its missing parents, as `mkdir -p` does.
    /// - Returns: `nil` once the folder exists, else the folder that could not be made and `mkdir`'s error number.
    public static func createFolders(_ path: String) -> (folder: String, code: Int32)? {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o755) != 0 && errno != EEXIST { return (current, errno) }
        }
        return nil
    }
}
