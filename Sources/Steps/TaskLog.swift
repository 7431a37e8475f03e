#if canImport(Glibc)
import JobGraphBasics
import Glibc
#endif

/// The folder of task logs, created on first use.
final class LogDirectory: Sendable {
    let path: String
    private let created = Locked(false)

    init(path: String) {
        self.path = path
    }

    /// Opens a task's log: truncated for a first attempt, appended to for a retry.
    func open(_ file: String, appending: Bool) throws -> TaskLog {
        try created.withLock { created in
            guard !created else { return }
            try makeDirectories(path)
            created = true
        }
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (appending ? O_APPEND : O_TRUNC)
        let descriptor = Glibc.open(file, flags, 0o644)
        guard descriptor >= 0 else {
            throw StepError("cannot open the log '\(file)': \(String(cString: strerror(errno)))")
        }
        return TaskLog(descriptor: descriptor)
    }

    private func makeDirectories(_ path: String) throws {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o755) != 0 && errno != EEXIST {
                throw StepError("cannot create '\(current)': \(String(cString: strerror(errno)))")
            }
        }
    }
}

/// One attempt's log file: whole lines appended as they come; closed once.
final class TaskLog: Sendable {
    private let descriptor: Locked<Int32>

    init(descriptor: Int32) {
        self.descriptor = Locked(descriptor)
    }

    /// Writes the line and a newline; a full disk loses log lines, never the run.
    func write(line: [UInt8]) {
        descriptor.withLock { descriptor in
            guard descriptor >= 0 else { return }
            var bytes = line
            bytes.append(UInt8(ascii: "\n"))
            bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 && errno == EINTR { continue }
                    if written <= 0 { return }
                    offset += written
                }
            }
        }
    }

    func close() {
        descriptor.withLock { descriptor in
            if descriptor >= 0 { _ = Glibc.close(descriptor) }
            descriptor = -1
        }
    }
}
