#if canImport(Glibc)
import Glibc
#endif

/// A file opened for `--events FILE`: truncated on open, written whole line by whole line, closed once.
///
/// Owns its descriptor and closes it in `close()` or, failing that, `deinit`. Use from one task at a time.
public final class EventFile: TextSink {
    /// The path as the user gave it.
    public let path: String
    private var descriptor: Int32?

    /// Creates or truncates the file at `path` (mode 0644).
    /// - Parameter appending: keep what the file holds and write after it, as each rerun of
    ///   `run --watch` does.
    /// - Throws: `EventFileError` with the path and the system's reason when it cannot be opened.
    public init(path: String, appending: Bool = false) throws(EventFileError) {
        self.path = path
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (appending ? O_APPEND : O_TRUNC)
        let opened = path.withCString { open($0, flags, 0o644) }
        guard opened >= 0 else { throw EventFileError(path: path, errno: errno) }
        descriptor = opened
    }

    deinit { close() }

    /// Writes `text` with one `write(2)` sequence, straight to the file, so a killed run keeps every event
    /// written so far; a write after `close()` is ignored.
    public func write(_ text: String) {
        guard let descriptor else { return }
        var text = text
        text.withUTF8 { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return  // a full disk loses the event log, not the run
                }
                offset += written
            }
        }
    }

    /// Flushes to disk and closes the file; later calls do nothing.
    public func close() {
        guard let descriptor else { return }
        self.descriptor = nil
        // The events are already written; a failed fsync or close has nobody left to tell.
        _ = fsync(descriptor)
        _ = Glibc.close(descriptor)
    }
}

/// `--events FILE` could not be opened.
public struct EventFileError: Error, Equatable, CustomStringConvertible {
    /// The path as the user gave it.
    public var path: String
    /// The `errno` value `open(2)` left.
    public var errno: Int32

    /// An error for `path` with the `errno` that `open(2)` left.
    public init(path: String, errno: Int32) {
        self.path = path
        self.errno = errno
    }

    /// `cannot open event file 'build/events.jsonl': No such file or directory`.
    public var description: String {
        "cannot open event file '\(path)': \(String(cString: strerror(errno)))"
    }
}
