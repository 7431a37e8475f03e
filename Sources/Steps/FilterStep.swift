import Dispatch
import Execution
import ImageCodec
import JobGraphBasics
import JobGraphSystem
import PipelineModel
#if canImport(Glibc)
import Glibc
#endif

/// One attempt of a `filter` task: decode the input, apply the effect, encode by the output's extension and
/// write it atomically, on a global dispatch queue (never on the event loop's thread).
///
/// The output appears complete or not at all: it is written to a temporary file beside it, synced and
/// renamed. After a failure nothing is left at `output`, not even an earlier run's image, which would
/// otherwise pass for this run's result (as `download` leaves nothing at `to`).
final class FilterStep: TaskExecution, Sendable {
    private let work: TaskWork
    private let filter: FilterWork
    private let log: TaskLog
    private let reporter: TaskReporter
    private let codec: ImageCodec
    private let cancellation: CancellationFlag
    /// Why the work was stopped, set by the first of `terminate`, `kill` or the timeout.
    private let stopReason = Locked<String?>(nil)

    init(work: TaskWork, filter: FilterWork, log: TaskLog, reporter: TaskReporter, codec: ImageCodec = ImageCodec()) {
        self.work = work
        self.filter = filter
        self.log = log
        self.reporter = reporter
        self.codec = codec
        cancellation = CancellationFlag(deadline: work.timeout.map { .now + .milliseconds(Int64($0 * 1000)) })
    }

    func begin() {
        // The task's QoS as the queue's: a background filter yields the cores to interactive work.
        let qos: DispatchQoS.QoSClass = work.niceness >= 19 ? .background : work.niceness >= 10 ? .utility : .userInitiated
        DispatchQueue.global(qos: qos).async { self.run() }
    }

    private func run() {
        let result: TaskResult
        do {
            try perform()
            result = .succeeded
        } catch {
            removeStaleOutput()
            let problem: String
            if var codecError = error as? ImageCodecError {
                codecError.path = shown(codecError.path)
                problem = codecError.description
            } else {
                problem = String(describing: error)
            }
            let reason = stopReason.withLock { $0 } ?? timeoutReason ?? problem
            result = .failed(exitCode: nil, reason: reason)
            log.write(line: Array(reason.utf8))
        }
        log.close()
        reporter.finished(result)
    }

    private func perform() throws {
        let input = try codec.decode(contentsOf: filter.input)
        try checkNotStopped()
        let inputSize = "\(input.width)×\(input.height)"
        let result = try effect(for: input).applied(to: input, pixelLimit: codec.pixelLimit, cancellation: cancellation,
                                                    path: filter.output)
        try checkNotStopped()
        let bytes = try codec.encode(result, for: filter.output, quality: filter.quality ?? ImageCodec.defaultJPEGQuality)
        try checkNotStopped()
        try writeAtomically(bytes, to: filter.output)
        write(line: "\(filter.effect.rawValue): \(shown(filter.input)) (\(inputSize)) -> \(shown(filter.output)) "
            + "(\(result.width)×\(result.height), \(bytes.count) bytes)")
    }

    /// The effect with the task's parameters; the defaults are the contract's (intensity 1) or the codec's.
    private func effect(for bitmap: Bitmap) -> ImageEffect {
        switch filter.effect {
        case .sepia: .sepia(intensity: filter.intensity ?? 1)
        case .grayscale: .grayscale
        case .invert: .invert
        case .blur: .blur(radius: filter.radius)
        case .tiltShift: .tiltShift(radius: filter.radius)
        case .resize: .resize(width: filter.width, height: filter.height)
        }
    }

    // MARK: - Writing

    /// Writes `bytes` to a new temporary file in `path`'s folder, syncs it, and renames it over `path`; the
    /// temporary file is removed on every failure.
    private func writeAtomically(_ bytes: [UInt8], to path: String) throws {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        try makeFolders(folder.isEmpty ? "/" : folder)
        let temporary = folder + "/." + name + ".jobgraph-" + String(UInt64.random(in: .min ... .max), radix: 16) + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw StepError("cannot create a file in '\(shown(folder))': \(systemMessage())") }
        var isOpen = true
        var isRenamed = false
        defer {
            if isOpen { close(descriptor) }
            if !isRenamed { unlink(temporary) }
        }
        if let code = bytes.withUnsafeBytes({ FileCalls.writeAll($0, to: descriptor) }) {
            throw StepError("cannot write '\(shown(path))': \(Errno(rawValue: code))")
        }
        // fsync before rename: after a crash the name must not point at a file whose data never reached the disk.
        guard fsync(descriptor) == 0 else { throw StepError("cannot write '\(shown(path))': \(systemMessage())") }
        isOpen = false
        guard close(descriptor) == 0 else { throw StepError("cannot write '\(shown(path))': \(systemMessage())") }
        try checkNotStopped()
        guard rename(temporary, path) == 0 else { throw StepError("cannot write '\(shown(path))': \(systemMessage())") }
        isRenamed = true
        // Make the rename itself durable; a failure here leaves a complete file, so it is not an error.
        let folderDescriptor = open(folder.isEmpty ? "/" : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderDescriptor >= 0 {
            _ = fsync(folderDescriptor)
            close(folderDescriptor)
        }
    }

    /// Creates `path` and its missing parents, as `mkdir -p`.
    private func makeFolders(_ path: String) throws {
        if let (folder, code) = FileCalls.createFolders(path) {
            throw StepError("cannot create the folder '\(shown(folder))': \(Errno(rawValue: code))")
        }
    }

    /// Removes whatever is at `output` after a failure, unless it is the input itself (a filter in place whose
    /// input turned out corrupt must not lose it).
    private func removeStaleOutput() {
        var outputStatus = stat(), inputStatus = stat()
        guard lstat(filter.output, &outputStatus) == 0, (outputStatus.st_mode & S_IFMT) != S_IFDIR else { return }
        if stat(filter.input, &inputStatus) == 0, inputStatus.st_dev == outputStatus.st_dev, inputStatus.st_ino == outputStatus.st_ino {
            return
        }
        unlink(filter.output)
    }

    // MARK: - Stopping

    /// What a stop at the task's `timeout` says, once it passed.
    private var timeoutReason: String? {
        guard let timeout = work.timeout, cancellation.isPastDeadline else { return nil }
        return "timed out after \(DurationText.text(forSeconds: timeout))"
    }

    private func stop(because reason: String) {
        stopReason.withLock { if $0 == nil { $0 = reason } }
        cancellation.cancel()
    }

    private func checkNotStopped() throws {
        if cancellation.isCancelled { throw ImageCodecError(path: filter.output, kind: .cancelled) }
    }

    // MARK: - Output

    private func write(line: String) {
        log.write(line: Array(line.utf8))
        reporter.output(line)
    }

    /// The path as the user wrote it: relative to the task's folder when inside it.
    private func shown(_ path: String) -> String {
        let prefix = work.workingDirectory.hasSuffix("/") ? work.workingDirectory : work.workingDirectory + "/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
    }

    private func systemMessage() -> String { String(cString: strerror(errno)) }

    // MARK: - TaskExecution

    /// Stops at the next band of rows; the grace period is not needed, as no process is involved.
    func terminate(grace: Double) {
        stop(because: "stopped")
    }

    func kill() {
        stop(because: "stopped")
    }

    /// A no-op: the work runs on a shared dispatch queue, which cannot be suspended mid-item.
    func pause() {}

    func resume() {}
}
