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
    ///
    /// The file itself is created by the first line written: a task that prints nothing leaves no log,
    /// and a run of thousands of silent tasks does not pay for thousands of new files. A log left by an
    /// earlier run is truncated here, so it never shows another run's lines.
    /// - Throws: `StepError` when the folder cannot be made or an earlier log cannot be truncated.
    func open(_ file: String, appending: Bool) throws -> TaskLog {
        try created.withLock { created in
            guard !created else { return }
            try makeDirectories(path)
            created = true
        }
        guard !appending else { return TaskLog(path: file, descriptor: nil) }
        let descriptor = Glibc.open(file, O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard descriptor >= 0 || errno == ENOENT else {
            throw StepError("cannot open the log '\(file)': \(String(cString: strerror(errno)))")
        }
        return TaskLog(path: file, descriptor: descriptor >= 0 ? descriptor : nil)
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
    private enum State {
        case notCreated
        case open(Int32)
        case closed
    }

    private let path: String
    private let state: Locked<State>

    /// - Parameter descriptor: the file, already open for writing; `nil` to create (or append to) it when
    ///   the first line comes.
    init(path: String, descriptor: Int32?) {
        self.path = path
        state = Locked(descriptor.map(State.open) ?? .notCreated)
    }

    /// Writes the line and a newline; a full disk or a log that cannot be created loses log lines, never
    /// the run.
    func write(line: [UInt8]) {
        state.withLock { state in
            let descriptor: Int32
            switch state {
            case .open(let open):
                descriptor = open
            case .notCreated:
                descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
                guard descriptor >= 0 else { return }
                state = .open(descriptor)
            case .closed:
                return
            }
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
        state.withLock { state in
            if case .open(let descriptor) = state { _ = Glibc.close(descriptor) }
            state = .closed
        }
    }
}
