#if canImport(Glibc)
import Glibc
#endif
import Foundation
import JobGraphBasics

/// One `salloc --no-shell` of allocation mode, followed while it pends and stoppable at any moment.
///
/// `salloc` says at once which job it asked for (`Pending job allocation 123`) and then waits, silent,
/// until the controller grants it. While it waits, `squeue` tells why (`Resources`, `Priority`), and each
/// change is said through `waiting`. A `cancel()` from any thread (Ctrl-C, SIGTERM) `scancel`s the
/// pending job and stops `salloc`, so that nothing of the run stays in the queue (issue 34: SIGINT was
/// absorbed while `salloc` pended).
final class AllocationRequest: Sendable {
    enum Outcome: Sendable {
        case granted(job: String)
        /// Slurm refused it, or `salloc` failed: its words.
        case refused(String)
        /// `cancel()` came first; the job, if Slurm had made one, is cancelled.
        case cancelled
    }

    private struct State {
        var process: Process?
        var job: String?
        var isCancelled = false
    }

    private let salloc: SlurmCommand
    private let squeue: SlurmCommand
    private let scancel: SlurmCommand
    private let arguments: [String]
    /// Where `salloc`'s standard error goes, read as it grows (the job's id comes there first).
    private let messageFile: String
    private let state = Locked(State())

    /// - Parameter messageFile: a file of the run's own for `salloc`'s messages.
    init(cluster: SlurmCluster, arguments: [String], messageFile: String) {
        salloc = cluster.salloc
        squeue = cluster.squeue
        scancel = cluster.scancel
        self.arguments = arguments
        self.messageFile = messageFile
    }

    /// Asks for the allocation and waits until Slurm grants or refuses it, or `cancel()` comes. Blocks:
    /// call it on a worker thread.
    /// - Parameter waiting: told "waiting for Slurm allocation 123: Resources" each time the reason changes.
    /// - Throws: when `salloc` cannot be started at all.
    func run(waiting: (String) -> Void) throws -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: salloc.path)
        process.arguments = arguments
        process.environment = salloc.environment
        process.standardInput = FileHandle.nullDevice
        guard FileManager.default.createFile(atPath: messageFile, contents: nil),
              let messages = FileHandle(forWritingAtPath: messageFile) else {
            return .refused("cannot create '\(messageFile)'")
        }
        process.standardError = messages
        process.standardOutput = messages
        let started = state.withLock { state -> Bool in
            guard !state.isCancelled else { return false }
            state.process = process
            return true
        }
        guard started else { return .cancelled }
        defer { try? messages.close() }  // the child holds its own copy
        try process.run()

        // squeue is asked at once, then less and less often: a long wait costs the controller little.
        var interval = 0.5
        var nextQuery = ContinuousClock.now
        var said: String?
        while process.isRunning {
            if state.withLock({ $0.isCancelled }) { break }
            if let job = state.withLock({ $0.job }) ?? pendingJob() {
                if ContinuousClock.now >= nextQuery {
                    if let reason = pendingReason(job), reason != said {
                        said = reason
                        waiting("waiting for Slurm allocation \(job): \(reason)")
                    }
                    nextQuery = ContinuousClock.now + .milliseconds(Int64(interval * 1000))
                    interval = min(interval * 2, 10)
                }
            }
            usleep(50_000)
        }
        if state.withLock({ $0.isCancelled }) {
            stop(process)
            return .cancelled
        }
        process.waitUntilExit()
        let text = (try? String(contentsOfFile: messageFile, encoding: .utf8)) ?? ""  // none: salloc said nothing
        unlink(messageFile)
        guard process.terminationStatus == 0, let job = SlurmExecutor.grantedJob(in: text) else {
            let output = SlurmCommand.Output(status: process.terminationStatus, standardOutput: "", standardError: text)
            return .refused(output.message.isEmpty ? "salloc exited with \(process.terminationStatus)" : output.message)
        }
        // A cancel that came as the grant did: the allocation is released at once.
        if state.withLock({ $0.isCancelled }) {
            _ = try? scancel.run([job])  // it may have ended already
            return .cancelled
        }
        return .granted(job: job)
    }

    /// Ctrl-C or SIGTERM: stops the request from any thread; `run` then returns `.cancelled`. Never blocks.
    func cancel() {
        state.withLock { $0.isCancelled = true }
    }

    /// Cancels the pending job (when its id is known) and ends `salloc`: SIGTERM, which makes it revoke
    /// its request itself, then SIGKILL if it does not end within 5 s.
    private func stop(_ process: Process) {
        if let job = state.withLock({ $0.job }) ?? pendingJob() {
            _ = try? scancel.run([job])  // salloc's own revocation below covers a failure
        }
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        let deadline = ContinuousClock.now + .seconds(5)
        while process.isRunning, ContinuousClock.now < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        unlink(messageFile)
    }

    /// The job `salloc` asked for, once it has said so (`salloc: Pending job allocation 123`).
    private func pendingJob() -> String? {
        let text = (try? String(contentsOfFile: messageFile, encoding: .utf8)) ?? ""  // not written yet
        let job = Self.job(after: "Pending job allocation ", in: text) ?? SlurmExecutor.grantedJob(in: text)
        if let job { state.withLock { $0.job = job } }
        return job
    }

    /// Why the job still pends (`squeue`'s `%r`); `nil` when it no longer pends or squeue did not answer.
    private func pendingReason(_ job: String) -> String? {
        guard let output = try? squeue.run(["--noheader", "--jobs=\(job)", "--format=%T|%r"]), output.succeeded else { return nil }  // next time
        let fields = output.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|").map(String.init)
        guard fields.count == 2, fields[0] == "PENDING" else { return nil }
        return SlurmCluster.pendingReason(fields[1])
    }

    /// The job id that follows `prefix` in what `salloc` said (`Pending job allocation 123`).
    static func job(after prefix: String, in text: String) -> String? {
        guard let range = text.range(of: prefix) else { return nil }
        let id = text[range.upperBound...].prefix { $0.isNumber }
        return id.isEmpty ? nil : String(id)
    }
}
