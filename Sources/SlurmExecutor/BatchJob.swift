import Foundation
import JobGraphBasics
import Execution
import PipelineModel

/// One attempt as a Slurm batch job (jobs mode): its script, its place in the `BatchJobQueue`, and the
/// task log it writes on the shared file system, read back as it grows and forwarded as output lines.
final class BatchJob: TaskExecution, Sendable {
    struct State {
        var slurmID: String?
        /// How far the log has been forwarded.
        var offset: UInt64 = 0
        /// The unfinished last line read so far.
        var partial: [UInt8] = []
        var isDone = false
        var timedOut = false
        /// Asked to stop while `sbatch` was submitting it: cancelled as soon as its id is known.
        var stopRequested = false
        var timer: DispatchWorkItem?
        /// Why Slurm never took the job, in its own words.
        var rejection: String?
    }

    let work: TaskWork
    let commands: [String]
    let spec: SlurmSpec
    let statusFile: String
    /// The job script; it runs the commands with their output appended to the task's log.
    let scriptFile: String
    /// Where Slurm writes its own messages about the job (a time limit, a node failure).
    let slurmOutput: String
    let arrayKey: String?
    /// The token of the run that submitted the job (a killed run's, for a job taken over), and where its end
    /// is written down (`JobLedger`).
    let runToken: String
    /// A digest of what the job runs (`SlurmExecutor.definition`), written down with it.
    let definition: String?
    private let ledger: (any JobLedger)?
    private let reporter: TaskReporter
    private unowned let queue: BatchJobQueue
    let state = Locked(State())

    /// A new attempt's job, not submitted yet: its script written, its log prepared.
    convenience init(work: TaskWork, commands: [String], concurrently: Bool, spec: SlurmSpec, statusFile: String, arrayKey: String?,
                     runToken: String, definition: String, ledger: (any JobLedger)?, reporter: TaskReporter, queue: BatchJobQueue) throws {
        self.init(work: work, commands: commands, spec: spec, statusFile: statusFile, arrayKey: arrayKey, slurmID: nil, runToken: runToken,
                  definition: definition, ledger: ledger, reporter: reporter, queue: queue)
        let offset = try Self.prepareLog(work)
        state.withLock { $0.offset = offset }
        let program = TaskScript.program(concurrently: concurrently)
        // The job exits as its commands did (the status file's `INDEX CODE`), so that Slurm's own state
        // and `sacct` say FAILED for a failed task, not COMPLETED.
        let script = "#!/bin/sh\n# jobgraph: task \(work.id.rawValue), attempt \(work.attempt)\nexec >>\(TaskScript.quoted(work.logPath)) 2>&1\n"
            + (["/bin/sh", "-c", program, "jobgraph-task", statusFile] + commands).map(TaskScript.quoted).joined(separator: " ") + "\n"
            + "s=$(sed -n '2s/.* //p' \(TaskScript.quoted(statusFile))); exit ${s:-0}\n"
        try script.write(toFile: scriptFile, atomically: false, encoding: .utf8)
        unlink(statusFile)
        unlink(slurmOutput)
    }

    /// - Parameter slurmID: set for a job a killed run submitted, taken over as it is (docs/pipeline.md,
    ///   "Reattach"): its files are the killed run's, named by its token, and its log is forwarded from the start.
    init(work: TaskWork, commands: [String], spec: SlurmSpec, statusFile: String, arrayKey: String? = nil, slurmID: String?,
         runToken: String, definition: String? = nil, ledger: (any JobLedger)?, reporter: TaskReporter, queue: BatchJobQueue) {
        self.work = work
        self.definition = definition
        self.commands = commands
        self.spec = spec
        self.statusFile = statusFile
        let base = statusFile.hasSuffix(".status") ? String(statusFile.dropLast(".status".count)) : statusFile
        scriptFile = base + ".sh"
        slurmOutput = base + ".slurm.out"
        self.arrayKey = arrayKey
        self.runToken = runToken
        self.ledger = ledger
        self.reporter = reporter
        self.queue = queue
        state.withLock { $0.slurmID = slurmID }
    }

    /// A first attempt starts a fresh log; a retry appends under a header, as local tasks do.
    /// - Returns: the log's size once prepared: output starts there.
    private static func prepareLog(_ work: TaskWork) throws -> UInt64 {
        let directory = (work.logPath as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if work.attempt == 1 {
            _ = FileManager.default.createFile(atPath: work.logPath, contents: nil)  // failure shows when the job writes
            return 0
        }
        let handle = FileHandle(forWritingAtPath: work.logPath) ?? {
            _ = FileManager.default.createFile(atPath: work.logPath, contents: nil)  // failure shows when the job writes
            return FileHandle(forWritingAtPath: work.logPath)
        }()
        guard let handle else { throw SlurmSetupError(["cannot open the log '\(work.logPath)'"]) }
        defer { try? handle.close() }  // a close error loses nothing written
        let end = try handle.seekToEnd()
        let header = Data("--- attempt \(work.attempt) ---\n".utf8)
        try handle.write(contentsOf: header)
        return end + UInt64(header.count)
    }

    /// Forwards the lines the job has added to its log since the last look; at the end also the last,
    /// unfinished one.
    func forwardOutput(final: Bool) {
        let lines = state.withLock { state -> [String] in
            guard let handle = FileHandle(forReadingAtPath: work.logPath) else { return [] }
            defer { try? handle.close() }  // read-only
            var lines: [String] = []
            if (try? handle.seek(toOffset: state.offset)) != nil, let data = try? handle.readToEnd(), !data.isEmpty {
                state.offset += UInt64(data.count)
                state.partial.append(contentsOf: data)
                while let newline = state.partial.firstIndex(of: UInt8(ascii: "\n")) {
                    lines.append(String(decoding: state.partial[..<newline], as: UTF8.self))
                    state.partial.removeSubrange(...newline)
                }
            }
            if final, !state.partial.isEmpty {
                lines.append(String(decoding: state.partial, as: UTF8.self))
                state.partial = []
            }
            return lines
        }
        for line in lines { reporter.output(line) }
    }

    /// Ends the attempt once: the last output, the Slurm id, then the result.
    func finish(slurmState: String?, reason: String?) {
        forwardOutput(final: true)
        let (id, timedOut, rejection, first) = state.withLock { state -> (String?, Bool, String?, Bool) in
            defer { state.isDone = true }
            state.timer?.cancel()
            return (state.slurmID, state.timedOut, state.rejection, !state.isDone)
        }
        guard first else { return }
        let status = (try? String(contentsOfFile: statusFile, encoding: .utf8)) ?? ""  // none: the job never ran its script
        // An array item's own SLURM_JOB_ID is not the array's id: the run's own file name is its guard.
        let recorded = TaskScript.read(status, commands: commands, job: id.flatMap { $0.contains("_") ? nil : $0 }).result
        let result: TaskResult
        if let rejection {
            result = .failed(exitCode: nil, reason: rejection)
        } else if timedOut {
            result = .failed(exitCode: nil, reason: "timed out after \(DurationText.text(forSeconds: work.timeout ?? 0))")
        } else if let recorded {
            result = Self.naming(slurmState, in: recorded)
        } else {
            result = .failed(exitCode: nil, reason: slurmMessage(id: id, state: slurmState, reason: reason))
        }
        if let id {
            // Written down before its files go: a run killed from here on finds the job ended, not one to take over.
            var exitCode: Int32?
            if case .failed(let code, _, _) = result { exitCode = code }
            let record = SubmittedJob(runToken: runToken, job: id, task: work.id, attempt: work.attempt, statusFile: statusFile,
                                      schedulerState: slurmState, exitCode: exitCode, outcome: result.isSuccess ? .succeeded : .failed)
            do { try ledger?.ended(record) } catch { queue.recordingFailed("cannot record the end of Slurm job \(id) in .jobgraph/state.db: \(error)") }
        }
        unlink(statusFile)
        unlink(scriptFile)
        unlink(slurmOutput)
        if work.attempt == 1, let size = (try? FileManager.default.attributesOfItem(atPath: work.logPath))?[.size] as? UInt64, size == 0 {
            unlink(work.logPath)  // as locally: a silent task leaves no log
        }
        if let id { reporter.executorJob(id) }
        if let slurmState { reporter.executorState(slurmState) }
        reporter.finished(result)
    }

    /// A failure that Slurm ended in a state of its own (`OUT_OF_MEMORY`, `TIMEOUT`, `NODE_FAIL`,
    /// `PREEMPTED`, `CANCELLED`) says so in its reason, so that the history and the report keep it.
    static func naming(_ slurmState: String?, in result: TaskResult) -> TaskResult {
        guard case .failed(let code, let reason, let cause) = result, let slurmState, slurmState != "FAILED", slurmState != "COMPLETED",
              !reason.contains(slurmState) else { return result }
        return .failed(exitCode: code, reason: "\(reason) (Slurm: \(slurmState))", cause: cause)
    }

    /// Slurm's own account of a job that did not record an end: its state, its reason, and what Slurm
    /// wrote to the job's output.
    private func slurmMessage(id: String?, state: String?, reason: String?) -> String {
        var message = "Slurm job \(id ?? "?") ended \(state ?? "without a status")"
        if let reason, !reason.isEmpty, reason != "None" { message += " (\(reason))" }
        let said = ((try? String(contentsOfFile: slurmOutput, encoding: .utf8)) ?? "")  // Slurm may have said nothing
            .split(separator: "\n").last { $0.contains("error") }
        if let said { message += ": " + said.trimmingCharacters(in: .whitespaces) }
        return message
    }

    /// Ends an attempt Slurm would not take.
    func rejected(_ message: String) {
        state.withLock { $0.rejection = message }
        finish(slurmState: nil, reason: nil)
    }

    // MARK: - TaskExecution

    func terminate(grace: Double) {
        queue.cancel(self)
    }

    func kill() {
        queue.cancel(self)
    }

    /// Suspending a job needs an operator's rights (`scontrol suspend`); a batch job keeps running.
    func pause() {}

    func resume() {}
}
