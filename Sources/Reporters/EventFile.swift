#if canImport(Glibc)
import Glibc
#endif
import Execution
import JobGraphBasics

/// A file opened for `--events FILE`: truncated on open, written whole line by whole line, closed once.
///
/// Owns its descriptor and closes it in `close()` or, failing that, `deinit`. Use from one task at a time.
public final class EventFile: TextSink {
    /// The path as the user gave it.
    public let path: String
    private var descriptor: Int32?
    /// Told once when a write fails; the file then takes no more, so it has no gap.
    private let failures: WriteFailures?

    /// Creates or truncates the file at `path` (mode 0644).
    /// - Parameters:
    ///   - appending: keep what the file holds and write after it, as each rerun of `run --watch` does.
    ///   - failures: where a write that fails (a full disk) is reported.
    /// - Throws: `EventFileError` with the path and the system's reason when it cannot be opened.
    public init(path: String, appending: Bool = false, failures: WriteFailures? = nil) throws(EventFileError) {
        self.path = path
        self.failures = failures
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
        let failure = text.withUTF8 { buffer in FileCalls.writeAll(UnsafeRawBufferPointer(buffer), to: descriptor) }
        // A full disk loses the rest of the event log, not the run; it is reported and the run's status says so.
        if let failure { fail(failure) }
    }

    /// Flushes to disk and closes the file; later calls do nothing.
    public func close() {
        guard let descriptor else { return }
        self.descriptor = nil
        // Some file systems report a full disk only here.
        let synced = fsync(descriptor) == 0 || errno == EINVAL || errno == EROFS  // a pipe or a device cannot sync
        let code = errno
        if !synced { failures?.record(.eventFile, path: path, errno: code) }
        if Glibc.close(descriptor) != 0 && synced { failures?.record(.eventFile, path: path, errno: errno) }
    }

    private func fail(_ code: Int32) {
        if let descriptor { _ = Glibc.close(descriptor) }
        descriptor = nil
        failures?.record(.eventFile, path: path, errno: code)
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
