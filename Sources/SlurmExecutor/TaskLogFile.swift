#if canImport(Glibc)
import Glibc
#endif
import JobGraphBasics
import Execution

/// A task's log for an attempt run in a worker step, kept as the local executor keeps it: a first
/// attempt truncates an earlier run's log and creates the file with its first line (a silent task leaves
/// none), a retry appends under a `--- attempt N ---` header.
final class TaskLogFile: Sendable {
    private let path: String
    private let descriptor = Locked<Int32?>(nil)

    init(work: TaskWork) {
        path = work.logPath
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex { mkdir(String(path[..<slash]), 0o755) }  // as LogDirectory
        if work.attempt > 1 {
            write(line: "--- attempt \(work.attempt) ---")
        } else {
            let earlier = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
            if earlier >= 0 { descriptor.withLock { $0 = earlier } }
        }
    }

    /// Appends one line; a log that cannot be written loses the line (the events still carry it).
    func write(line: String) {
        descriptor.withLock { descriptor in
            if descriptor == nil {
                let opened = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
                guard opened >= 0 else { return }
                descriptor = opened
            }
            var bytes = Array(line.utf8)
            bytes.append(UInt8(ascii: "\n"))
            _ = bytes.withUnsafeBytes { Glibc.write(descriptor!, $0.baseAddress, $0.count) }
        }
    }

    func close() {
        descriptor.withLock { descriptor in
            if let open = descriptor { Glibc.close(open) }
            descriptor = nil
        }
    }
}
