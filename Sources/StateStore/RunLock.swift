#if canImport(Glibc)
import Glibc
#endif
import JobGraphBasics

/// Holds a pipeline's lock, `.jobgraph/<pipeline file>.lock`, with `flock(LOCK_EX)` for the length of a
/// run, so two runs of one pipeline never overlap (docs/state.md, "The run lock"); the file names the
/// holder's pid for whoever is refused. Pipelines beside each other have locks of their own.
///
/// A run started by a task of the run that holds the lock (a task's `jobgraph run other-task`, the
/// recursive-make habit) goes on under that lock instead of waiting for it for ever: the holder exports
/// the lock's path in `heldVariable`, and a process that finds its own lock path there, held by one of
/// its ancestors, is nested (`isNested`) and holds nothing itself.
///
/// The kernel drops the lock when the descriptor closes, including when the process is killed, so a
/// `kill -9` never leaves a stale lock behind. Released by `release()` or `deinit`; safe from any thread.
public final class RunLock: Sendable {
    /// The variable by which a run tells the processes of its tasks which lock it holds: the lock file's path.
    public static let heldVariable = "JOBGRAPH_RUN_LOCK"

    /// The lock file.
    public let path: String
    /// This run goes on under the lock of the run that started it, which holds it; this object holds nothing.
    public let isNested: Bool
    /// The open descriptor while held; `nil` once released, and for a nested run.
    private let descriptor: Locked<Int32?>

    private init(path: String, descriptor: Int32?) {
        self.path = path
        self.isNested = descriptor == nil
        self.descriptor = Locked(descriptor)
    }

    deinit { release() }

    /// Takes the lock at `path`, creating the file when missing; or, for a run nested in the holder's (see
    /// the type), a `RunLock` that holds nothing.
    /// - Parameters:
    ///   - waiting: block until the holder lets go (`--wait`) instead of failing at once.
    ///   - environment: this process's environment, where `heldVariable` may name the lock a parent run holds.
    /// - Throws: `StateStoreError.runLockHeld` naming the holder's pid when another process has it and
    ///   `waiting` is false; `StateStoreError.fileSystem` when the file cannot be opened or written.
    static func acquire(path: String, waiting: Bool, environment: [String: String] = [:]) throws(StateStoreError) -> RunLock {
        // CLOEXEC: a task's child processes must not inherit the lock and keep it after jobgraph exits.
        let descriptor = retryingInterrupts { open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) }
        guard descriptor >= 0 else { throw .fileSystem(operation: "open", path: path, errno: errno) }
        // Tried without waiting first even with `waiting`: a nested run must not wait for its own parent.
        if retryingInterrupts({ flock(descriptor, LOCK_EX | LOCK_NB) }) != 0 {
            var code = errno
            guard code == EWOULDBLOCK else {
                close(descriptor)
                throw .fileSystem(operation: "lock", path: path, errno: code)
            }
            let holder = holderPID(descriptor)
            if environment[heldVariable] == path, let holder, isAncestor(holder) {
                close(descriptor)
                return RunLock(path: path, descriptor: nil)
            }
            guard waiting else {
                close(descriptor)
                throw .runLockHeld(pid: holder)
            }
            if retryingInterrupts({ flock(descriptor, LOCK_EX) }) != 0 {
                code = errno
                close(descriptor)
                throw .fileSystem(operation: "lock", path: path, errno: code)
            }
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

    /// Whether `pid` is this process's parent, or its parent's, and so on up to init.
    private static func isAncestor(_ pid: Int32) -> Bool {
        var current = getppid()
        // A chain of parents is short; the bound only guards against a /proc that reads oddly.
        for _ in 0..<4096 where current > 1 {
            if current == pid { return true }
            guard let parent = parentPID(of: current) else { return false }
            current = parent
        }
        return current == pid
    }

    /// The parent of `pid`, from `/proc/<pid>/stat`: the field after the state, which follows the name in
    /// parentheses (the name itself may hold spaces and parentheses).
    private static func parentPID(of pid: Int32) -> Int32? {
        let descriptor = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = buffer.withUnsafeMutableBytes { bytes in retryingInterrupts { Int32(read(descriptor, bytes.baseAddress, bytes.count)) } }
        guard count > 0, let nameEnd = buffer[0..<Int(count)].lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = buffer[(nameEnd + 1)..<Int(count)].split(separator: UInt8(ascii: " "))
        guard fields.count > 1 else { return nil }
        return Int32(String(decoding: fields[1], as: UTF8.self))
    }

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
