import Foundation
import JobGraphBasics
import Execution

/// One attempt run by a `StepWorker`: its output lines, its end, and the signals the Runner sends it,
/// which the worker delivers to the task's process group on the node.
///
/// Stops as a local task stops: a timeout or `terminate` sends SIGTERM, then SIGKILL after the grace;
/// `pause`/`resume` send SIGSTOP/SIGCONT.
final class WorkerTask: TaskExecution, @unchecked Sendable {
    // `@unchecked`: the mutable state lives in `state`, a `Locked` box; the rest is immutable.
    private struct State {
        /// The task's process group on the node, once the task file named it.
        var group: Int32?
        /// Signals asked for before the group was known.
        var pending: [String] = []
        var timedOut = false
        var isDone = false
        var slurmError: String?
    }

    let key: String
    private let work: TaskWork
    private let commands: [String]
    private let statusFile: String
    private let taskFile: String
    /// The allocation, whose steps alone write this attempt's status.
    private let job: String
    private let log: TaskLogFile
    private let reporter: TaskReporter
    /// Writes one request line to the worker.
    private let send: @Sendable (String) -> Void
    private let state = Locked(State())

    init(key: String, work: TaskWork, commands: [String], statusFile: String, taskFile: String, job: String,
         reporter: TaskReporter, send: @escaping @Sendable (String) -> Void) {
        self.key = key
        self.work = work
        self.commands = commands
        self.statusFile = statusFile
        self.taskFile = taskFile
        self.job = job
        self.reporter = reporter
        self.send = send
        log = TaskLogFile(work: work)
    }

    func begin() {
        if let timeout = work.timeout {
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak self] in self?.timeOut() }
        }
        send("run \(key) \(taskFile)")
    }

    // MARK: what the worker relays

    func printed(_ line: String) {
        if line.hasPrefix("srun: error:") || line.hasPrefix("srun: fatal:") { state.withLock { $0.slurmError = line } }
        log.write(line: line)
        reporter.output(line)
    }

    /// The task file leads process group `group` now.
    func started(group: Int32) {
        let pending = state.withLock { state -> [String] in
            state.group = group
            defer { state.pending = [] }
            return state.pending
        }
        for signal in pending { send("sig \(group) \(signal)") }
    }

    /// The task's process ended with `status` (`nil`: the worker itself ended first).
    func ended(status: Int32?) {
        let (first, timedOut, slurmError) = state.withLock { state in
            defer { state.isDone = true }
            return (!state.isDone, state.timedOut, state.slurmError)
        }
        guard first else { return }
        log.close()
        unlink(taskFile)
        let text = (try? String(contentsOfFile: statusFile, encoding: .utf8)) ?? ""  // no file: the commands never began
        unlink(statusFile)
        let recorded = TaskScript.read(text, commands: commands, job: job)
        if let id = recorded.slurmID { reporter.executorJob(id) }
        let local: TaskResult = if timedOut {
            .failed(exitCode: nil, reason: "timed out after \(DurationText.text(forSeconds: work.timeout ?? 0))")
        } else if status == 0 {
            .succeeded
        } else {
            .failed(exitCode: status, reason: "the worker step ended")
        }
        reporter.finished(SlurmExecutor.outcome(local: local, recorded: recorded.result, slurmError: slurmError))
    }

    // MARK: TaskExecution

    func terminate(grace: Double) {
        signal("TERM")
        DispatchQueue.global().asyncAfter(deadline: .now() + grace) { [weak self] in self?.kill() }
    }

    func kill() { signal("KILL") }
    func pause() { signal("STOP") }
    func resume() { signal("CONT") }

    private func timeOut() {
        let running = state.withLock { state -> Bool in
            if !state.isDone { state.timedOut = true }
            return !state.isDone
        }
        if running { terminate(grace: 5) }
    }

    private func signal(_ name: String) {
        let group = state.withLock { state -> Int32? in
            guard !state.isDone else { return nil }
            if state.group == nil { state.pending.append(name) }
            return state.group
        }
        if let group { send("sig \(group) \(name)") }
    }
}
