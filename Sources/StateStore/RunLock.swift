#if canImport(Glibc)
import Glibc
#endif
import JobGraphBasics

/// Holds `.jobgraph/lock` with `flock(LOCK_EX)` for the length of a run, so two runs never share one state
/// folder (contract: "State lives in `.jobgraph/`"); the file names the holder's pid for whoever is refused.
///
/// The kernel drops the lock when the descriptor closes, including when the process is killed, so a
/// `kill -9` never leaves a stale lock behind. Released by `release()` or `deinit`; safe from any thread.
public final class RunLock: Sendable {
    /// The lock file.
    public let path: String
    /// The open descriptor while held; `nil` once released.
    private let descriptor: Locked<Int32?>

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = Locked(descriptor)
    }

    deinit { release() }

    /// Takes the lock at `path`, creating the file when missing.
    /// - Parameter waiting: block until the holder lets go (`--wait`) instead of failing at once.
    /// - Throws: `StateStoreError.runLockHeld` naming the holder's pid when another process has it and
    ///   `waiting` is false; `StateStoreError.fileSystem` when the file cannot be opened or written.
    static func acquire(path: String, waiting: Bool) throws(StateStoreError) -> RunLock {
        // CLOEXEC: a task's child processes must not inherit the lock and keep it after jobgraph exits.
        let descriptor = retryingInterrupts { open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) }
        guard descriptor >= 0 else { throw .fileSystem(operation: "open", path: path, errno: errno) }
        let operation = LOCK_EX | (waiting ? 0 : LOCK_NB)
        if retryingInterrupts({ flock(descriptor, operation) }) != 0 {
            let code = errno
            defer { close(descriptor) }
            guard code == EWOULDBLOCK else { throw .fileSystem(operation: "lock", path: path, errno: code) }
            throw .runLockHeld(pid: holderPID(descriptor))
        }
        let text = Array("\(getpid())\n".utf8)
        let written = text.withUnsafeBytes { bytes in retryingInterrupts { Int32(pwrite(descriptor, bytes.baseAddress, bytes.count, 0)) } }
        guard ftruncate(descriptor, off_t(text.count)) == 0, written == text.count else {
            let code = errno
            close(descriptor)
            throw .fileSystem(operation: "write", path: path, errno: code)
        }
        return RunLock(path: path, descriptor: descriptor)
    }

    /// Lets go of the lock; later calls do nothing.
    public func release() {
        descriptor.withLock { descriptor in
            guard let open = descriptor else { return }
            descriptor = nil
            // Emptied first, so nobody refused after this moment reads a pid that no longer holds it.
            _ = ftruncate(open, 0)
            // Unlocked explicitly: a child being spawned by another thread holds a copy of the descriptor
            // until its exec closes it, and a lock held through that copy would outlive a bare `close`.
            _ = flock(open, LOCK_UN)
            close(open)
        }
    }

    /// Whether this object still holds the lock.
    public var isHeld: Bool { descriptor.withLock { $0 != nil } }

    /// The pid written by the holder, or `nil` when it cannot be read.
    ///
    /// The holder writes its pid just after it locks, so an empty file may only mean "not yet": a few
    /// short retries (at most 0.1 s in all) cover that gap.
    private static func holderPID(_ descriptor: Int32) -> Int32? {
        for attempt in 0..<20 {
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = buffer.withUnsafeMutableBytes { bytes in
                retryingInterrupts { Int32(pread(descriptor, bytes.baseAddress, bytes.count, 0)) }
            }
            if count > 0 {
                let text = String(decoding: buffer[0..<Int(count)], as: UTF8.self)
                if let pid = Int32(text.split(whereSeparator: \.isWhitespace).first ?? ""), pid > 0 { return pid }
            }
            if attempt < 19 { usleep(5_000) }
        }
        return nil
    }
}

/// Repeats a call that returns -1 with `errno` EINTR: a signal arriving mid-call is not a failure.
func retryingInterrupts(_ call: () -> Int32) -> Int32 {
    var result = call()
    while result == -1 && errno == EINTR { result = call() }
    return result
}
