import Execution
import Foundation
import PipelineModel
import PipelineRun
import Reporters
import TaskGraph

extension RunCommand {
    /// Where the lines about the run as a whole go: beside the events when they own standard output.
    var messageConsole: Console { progress == .json ? .standardError : .standardOutput }

    /// Runs `graph` once through `PipelineRun.run`, with its progress shown and its events and trace
    /// written as asked, and prints the summary.
    /// - Parameter slurmMode: set when tasks run on Slurm (`--executor slurm` or `executor: slurm`).
    /// - Returns: the run's summary and the exit status it gives the command.
    func runOnce(_ graph: TaskGraph, configuration: RunConfiguration, in session: PipelineSession, slurmMode: SlurmMode?,
                 endsProcess: Bool = false) async throws -> (summary: RunSummary, status: Int32) {
        // A file that cannot be written (a full disk) is said once, when it happens, and again in the summary.
        let writeFailures = WriteFailures { failure in warn("\(failure)") }
        // A cluster that cannot take the run is refused before the run is recorded.
        let executor = try session.executor(for: graph, slurmMode: slurmMode, configuration: configuration, failures: writeFailures,
                                            reattaches: !noReattach)
        // A task's `jobgraph run` on this pipeline goes on under this run's lock (docs/state.md, "The run lock").
        let configuration = session.exportingRunLock(configuration)
        Console.standardOutput.reportFailures(to: writeFailures)
        Console.standardError.reportFailures(to: writeFailures)
        // The files first and the console last: each batch reaches the observers in this order, so the
        // trace (written on `run-finished`) and the events file have failed or not by the time a later
        // one writes `run-finished` with the exit status (docs/events.md).
        var observers: [any RunObserver] = []
        if let trace { observers.append(ChromeTraceWriter(path: trace, failures: writeFailures)) }
        if let events {
            do {
                observers.append(try JSONLinesReporter(path: events, appending: true, failures: writeFailures))
            } catch {
                warn("this run's events are not written: \(error)")
            }
        }
        observers.append(makeProgressObserver(mode: progress, console: .standardOutput, environment: ProcessInfo.processInfo.environment,
                                              output: output ?? graph.pipeline.output ?? .prefixed, explains: explain, failures: writeFailures,
                                              terminalTasks: Set(graph.nodes.filter(\.spec.runsAlone).map(\.id)), handoff: session.handoff,
                                              resourceUse: graph.pipeline.declaresResources
                                                  ? ResourceUse(totals: ResourceTotal.list(jobs: configuration.jobs, totals: configuration.resources,
                                                                                           sources: configuration.resourceSources)) : nil))
        let summary = try await PipelineRun.run(graph, configuration: configuration, executor: executor, history: session.store,
                                                observers: observers, control: session.control, isNested: session.isNested,
                                                stopsLeftBehindProcesses: true,
                                                endsProcess: endsProcess,
                                                outputCache: cache.settings(for: graph, configuration: configuration)) { lines in Console.standardError.write(lines: lines) }
        messageConsole.write(lines: SummaryPrinter().render(summary, writeFailures: writeFailures.all))
        return (summary, RunExitStatus.of(summary, writeFailures: writeFailures))
    }
}
