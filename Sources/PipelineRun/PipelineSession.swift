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
    private let lock: RunLock
    private let loop: EventLoop

    /// Opens the state beside the pipeline, taking its run lock, and starts the event loop; makes this
    /// process the one that inherits and reaps what a task leaves behind outside its process group
    /// (contract: "Exit codes and signals").
    /// - Parameters:
    ///   - wait: wait for another run that holds the lock, rather than fail.
    ///   - warn: told what stops nothing but is worth saying (a damaged state moved aside).
    public init(pipelineDirectory: String, wait: Bool, warn: (String) -> Void) throws {
        (store, lock) = try openState(in: pipelineDirectory, wait: wait, warn: warn)
        let control = self.control
        loop = try EventLoop(signals: .runControl) { signal in control.deliver(signal) }
        do {
            try OrphanReaper.becomeSubreaper()
            loop.reapOrphans()
        } catch {
            warn("processes that leave their task's process group may outlive the run: \(error)")
        }
    }

    /// Stops the event loop and releases the run lock.
    public func close() {
        loop.stop()
        lock.release()
    }

    /// The executor a run of `graph` goes to: this machine's, or with `slurmMode` Slurm's once the cluster
    /// is found able to take the run.
    /// - Throws: `PipelineRunError.slurm` with every reason the cluster cannot; nothing ran.
    public func executor(for graph: TaskGraph, slurmMode: SlurmMode?, configuration: RunConfiguration,
                         failures: WriteFailures) throws(PipelineRunError) -> any TaskExecutor {
        let local = LocalExecutor(loop: loop, logDirectory: configuration.logDirectory, failures: failures)
        guard let slurmMode else { return local }
        do throws(SlurmSetupError) {
            return try SlurmExecutor.connect(graph: graph, mode: slurmMode, configuration: configuration, local: local)
        } catch {
            throw .slurm(error.problems)
        }
    }
}
