import Execution
import Foundation
import JobGraphSystem
import PipelineModel
import SlurmExecutor
import StateStore
import Steps
import TaskGraph

/// What lives as long as a command that runs a pipeline, across its runs (one, or one per change with
/// `--watch`): the pipeline's state and its run lock, and the event loop that reads signals and children.
public final class PipelineSession {
    /// Where the loop's signals go: to the run going on, else to the handler given to `whenIdle`.
    public let control = RunControlRelay()
    /// The pipeline's history, for `PipelineRun.run`.
    public let store: StateStore
    /// Between the live board and the tasks that use the terminal (docs/pipeline.md, "Interactive tasks").
    public let handoff = TerminalHandoff()
    private let lock: RunLock
    /// The pipeline file, as the user named it: its Slurm runs are written down under its name.
    private let pipelineFile: String
    private let loop: EventLoop
    /// Stops the session's local tasks if jobgraph dies without stopping them (docs/state.md, "A killed run").
    private let watchdog: SessionWatchdog?
    /// Told once if the watchdog cannot start.
    private let warn: @Sendable (String) -> Void

    /// Opens the state beside the pipeline, taking its run lock, and starts the event loop; makes this
    /// process the one that inherits and reaps what a task leaves behind outside its process group
    /// (contract: "Exit codes and signals").
    /// - Parameters:
    ///   - pipelineFile: the pipeline file, whose run lock is taken and whose tasks' records are read.
    ///   - wait: wait for another run that holds the lock, rather than fail.
    ///   - warn: told what stops nothing but is worth saying (a damaged state moved aside).
    public init(pipelineDirectory: String, pipelineFile: String, wait: Bool, warn: @escaping @Sendable (String) -> Void) throws {
        self.warn = warn
        self.pipelineFile = pipelineFile
        (store, lock) = try openState(in: pipelineDirectory, pipelineFile: pipelineFile, wait: wait, warn: warn)
        let control = self.control
        loop = try EventLoop(signals: .runControl) { signal in control.deliver(signal) }
        do {
            try OrphanReaper.becomeSubreaper()
            loop.reapOrphans()
        } catch {
            warn("processes that leave their task's process group may outlive the run: \(error)")
        }
        // A nested run shares the outer run's lock, and so would its report.
        let report = lock.isNested ? nil : Self.watchdogReport(lockPath: lock.path)
        if let report, let left = SessionWatchdog.takeReport(at: report) { warn(left.text) }
        watchdog = SessionWatchdog(report: report)
    }

    /// Where the watchdog says what it stopped (`.jobgraph/p.yaml.killed` beside `p.yaml.lock`), for the next run.
    private static func watchdogReport(lockPath: String) -> String {
        (lockPath.hasSuffix(".lock") ? String(lockPath.dropLast(".lock".count)) : lockPath) + ".killed"
    }

    /// The session's runs go on under the lock of a run whose task started this command (docs/cli.md, "Nested runs").
    public var isNested: Bool { lock.isNested }

    /// `configuration` with the run lock's path in its tasks' environment (`RunLock.heldVariable`), so that
    /// a task's `jobgraph run` on this pipeline goes on under this session's lock, and with the watchdog's
    /// mark (`SessionWatchdog.variable`), by which it finds the tasks' processes if jobgraph dies.
    public func exportingRunLock(_ configuration: RunConfiguration) -> RunConfiguration {
        var configuration = configuration
        configuration.environment[RunLock.heldVariable] = lock.path
        if let watchdog { configuration.environment[SessionWatchdog.variable] = watchdog.token }
        return configuration
    }

    /// Stops the event loop, closes the state file (sealing it after a run that finished writing it), and
    /// releases the run lock.
    public func close() {
        watchdog?.stop()
        loop.stop()
        store.close()  // sealed under the run lock: no other run writes it before the seal is taken
        lock.release()
    }

    /// The executor a run of `graph` goes to: this machine's, or with `slurmMode` Slurm's once the cluster
    /// is found able to take the run.
    /// - Parameter reattaches: on Slurm, take over what a killed run left there (false: cancel it first,
    ///   `--no-reattach`); a nested run writes its jobs down as any run does, and leaves that to the run it is nested in.
    /// - Throws: `PipelineRunError.slurm` with every reason the cluster cannot; nothing ran.
    public func executor(for graph: TaskGraph, slurmMode: SlurmMode?, configuration: RunConfiguration,
                         failures: WriteFailures, reattaches: Bool = true) throws(PipelineRunError) -> any TaskExecutor {
        let local = LocalExecutor(loop: loop, logDirectory: configuration.logDirectory, failures: failures, handoff: handoff) {
            [watchdog, warn] in
            if let error = watchdog?.start() { warn("the tasks would outlive jobgraph if it were killed: cannot start its watchdog: \(error)") }
        }
        guard let slurmMode else { return local }
        do throws(SlurmSetupError) {
            return try SlurmExecutor.connect(graph: graph, mode: slurmMode, configuration: configuration, local: local,
                                             ledger: store.jobLedger(pipelineFile: pipelineFile), reattaches: reattaches,
                                             isNested: lock.isNested)
        } catch {
            throw .slurm(error.problems)
        }
    }
}
