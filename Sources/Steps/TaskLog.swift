#if canImport(Glibc)
import Glibc
#endif
import Execution
import JobGraphBasics
import JobGraphSystem
import PipelineModel

/// The folder of task logs, created on first use; one per run.
final class LogDirectory: Sendable {
    private struct State {
        var isCreated = false
        /// The paths of the files in the folder: read once, then kept up to date as logs are created;
        /// `nil` when the folder could not be listed, and then every log may exist.
        var existing: Set<String>?
    }

    let path: String
    /// `path` and a slash.
    private let folderPrefix: String
    private let state = Locked(State())
    /// Where a log that cannot be written is reported, once.
    private let failures: WriteFailures?

    init(path: String, failures: WriteFailures? = nil) {
        self.path = path
        folderPrefix = path.hasSuffix("/") ? path : path + "/"
        self.failures = failures
    }

    /// Opens a task's log: truncated for a first attempt, appended to for a retry.
    ///
    /// The file itself is created by the first line written: a task that prints nothing leaves no log,
    /// and a run of thousands of silent tasks does not pay for thousands of new files. A log left by an
    /// earlier run is truncated here, so it never shows another run's lines. Which logs exist is read
    /// from the folder once: trying to open each task's log cost every task of a clean run a system call
    /// that failed (perf, 10,000 `touch` tasks).
    /// - Throws: `StepError` when the folder cannot be made or an earlier log cannot be truncated.
    func open(_ file: String, task: TaskID, appending: Bool) throws -> TaskLog {
        let mayExist = try state.withLock { state throws -> Bool in
            if !state.isCreated {
                try makeDirectories(path)
                state.existing = DirectoryEntry.listing(of: path).map { Set($0.map { folderPrefix + $0.name }) }
                state.isCreated = true
            }
            guard let existing = state.existing, isDirectlyInFolder(file) else { return true }
            return existing.contains(file)
        }
        guard !appending, mayExist else { return TaskLog(path: file, task: task, descriptor: nil, directory: self, failures: failures) }
        let descriptor = Glibc.open(file, O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard descriptor >= 0 || errno == ENOENT else {
            throw StepError("cannot open the log '\(file)': \(String(cString: strerror(errno)))")
        }
        return TaskLog(path: file, task: task, descriptor: descriptor >= 0 ? descriptor : nil, directory: self, failures: failures)
    }

    /// A log was created in the folder during the run.
    func noteCreated(_ file: String) {
        guard isDirectlyInFolder(file) else { return }
        state.withLock { _ = $0.existing?.insert(file) }
    }

    /// Whether `file` lies directly in this folder, the only files its listing knows about.
    private func isDirectlyInFolder(_ file: String) -> Bool {
        file.utf8.starts(with: folderPrefix.utf8) && !file.utf8.dropFirst(folderPrefix.utf8.count).contains(UInt8(ascii: "/"))
    }

    private func makeDirectories(_ path: String) throws {
        if let (folder, code) = FileCalls.createFolders(path) {
            throw StepError("cannot create '\(folder)': \(Errno(rawValue: code))")
        }
    }
}

/// One attempt's log file: whole lines appended as they come; closed once.
final class TaskLog: Sendable {
    private enum State {
        case notCreated
        case open(Int32)
        /// Writing failed once: later lines are dropped, so the log ends at a whole line, not with a gap.
        case failed(Int32?)
        case closed
    }

    private let path: String
    private let task: TaskID
    private let state: Locked<State>
    /// Told when this log creates its file.
    private let directory: LogDirectory?
    private let failures: WriteFailures?

    /// - Parameters:
    ///   - descriptor: the file, already open for writing; `nil` to create (or append to) it when the
    ///     first line comes.
    ///   - failures: told once when the log cannot be created or written.
    init(path: String, task: TaskID, descriptor: Int32?, directory: LogDirectory? = nil, failures: WriteFailures? = nil) {
        self.path = path
        self.task = task
        self.directory = directory
        self.failures = failures
        state = Locked(descriptor.map(State.open) ?? .notCreated)
    }

    /// Writes the line and a newline; a full disk or a log that cannot be created loses log lines, never
    /// the run, and is reported once (`WriteFailures`).
    func write(line: [UInt8]) {
        let failure = state.withLock { state -> Int32? in
            let descriptor: Int32
            switch state {
            case .open(let open):
                descriptor = open
            case .notCreated:
                descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
                guard descriptor >= 0 else {
                    state = .failed(nil)
                    return errno
                }
                state = .open(descriptor)
                directory?.noteCreated(path)
            case .failed, .closed:
                return nil
            }
            var bytes = line
            bytes.append(UInt8(ascii: "\n"))
            let code = bytes.withUnsafeBytes { FileCalls.writeAll($0, to: descriptor) }
            if code != nil { state = .failed(descriptor) }
            return code
        }
        // Reported outside the lock: the announcement writes to the console.
        if let failure { failures?.record(.taskLog(task), path: path, errno: failure) }
    }

    func close() {
        state.withLock { state in
            switch state {
            case .open(let descriptor), .failed(let descriptor?): _ = Glibc.close(descriptor)
            case .notCreated, .failed(nil), .closed: break
            }
            state = .closed
        }
    }
}
