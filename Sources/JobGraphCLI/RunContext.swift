import ArgumentParser
import Execution
import Foundation
import JobGraphBasics
import JobGraphSystem
import PipelineModel
import Reporters
import SlurmExecutor
import StateStore
import Steps
import TaskGraph

/// The `run` options that shape each run of one command: one run, or one per change with `--watch`.
struct RunSettings {
    var jobs: Int?
    var keepGoing = false
    var force = false
    var progress: ProgressMode = .auto
    /// `--output`; the file's `output:` applies where this is `nil`.
    var output: OutputMode?
    var trace: String?
    /// `--explain`: lines say why each task runs.
    var explain = false
    /// `--yes`: every task's `prompt:` is answered yes without asking.
    var answersPrompts = false
    /// Set when tasks run on Slurm (`--executor slurm` or `executor: slurm`).
    var slurmMode: SlurmMode?
}

/// What lives as long as a `run` command, across its runs: the pipeline's state and its run lock, the
/// event loop that reads signals and children, the `--events` file; and the one function that runs a
/// graph once with them, which both a plain run and `--watch` call.
final class RunContext {
    var settings: RunSettings
    let pipelineDirectory: String
    let control = RunControlRelay()
    /// Between the live board and the tasks that use the terminal.
    let handoff = TerminalHandoff()
    let state: (store: StateStore, lock: RunLock)
    private let loop: EventLoop
    /// `--events FILE`, truncated when the command starts; each run appends its events.
    let eventsPath: String?
    private let environment = ProcessInfo.processInfo.environment
    private let processorCount = ProcessInfo.processInfo.activeProcessorCount

    /// Opens the state beside the pipeline (taking its run lock), the event loop and the events file;
    /// a failure is printed and ends the command with exit status 2.
    init(settings: RunSettings, pipelineDirectory: String, pipelineFile: String, wait: Bool, events: String?) throws {
        self.settings = settings
        self.pipelineDirectory = pipelineDirectory
        state = try openState(in: pipelineDirectory, pipelineFile: pipelineFile, wait: wait)
        eventsPath = events
        do {
            try events.map { path throws(EventFileError) in try EventFile(path: path) }?.close()
        } catch {
            state.lock.release()
            Console.standardError.write(line: "error: \(error)")
            throw ExitCode(ExitStatus.invalid)
        }
        let control = self.control
        loop = try EventLoop(signals: .runControl) { signal in control.deliver(signal) }
        adoptEscapedProcesses(reapingWith: loop)
    }

    /// Stops the event loop, closes the events file and releases the run lock.
    func close() {
        loop.stop()
        state.lock.release()
    }

    /// The configuration a run of a graph gets.
    var configuration: RunConfiguration {
        var configuration = runConfiguration(pipelineDirectory: pipelineDirectory, jobs: settings.jobs ?? processorCount,
                                             processorCount: processorCount)
        configuration.keepGoing = settings.keepGoing
        configuration.force = settings.force
        configuration.answersPrompts = settings.answersPrompts
        // A task's `jobgraph run` on this pipeline goes on under this run's lock (docs/state.md, "The run lock").
        configuration.environment[RunLock.heldVariable] = state.lock.path
        return configuration
    }

    /// What shows the run's progress; `--output` wins over the file's `output:`.
    /// - Parameter failures: the run's write failures, which the event stream's `run-finished` counts.
    /// - Parameter terminalTasks: tasks that use the terminal, for which the live board steps aside.
    func progressObserver(fileOutput: OutputMode?, failures: WriteFailures? = nil,
                          terminalTasks: Set<TaskID> = []) -> sending any RunObserver {
        makeProgressObserver(mode: settings.progress, console: .standardOutput, environment: environment,
                             output: settings.output ?? fileOutput ?? .prefixed, explains: settings.explain, failures: failures,
                             terminalTasks: terminalTasks, handoff: handoff)
    }

    /// Where the lines about the run as a whole go: beside the events when they own standard output.
    var messageConsole: Console { settings.progress == .json ? .standardError : .standardOutput }

    /// How a run ended, and the exit status it gives the command.
    struct FinishedRun {
        var summary: RunSummary
        var status: Int32
    }

    /// Runs `graph` once, with its progress shown and recorded, and prints the summary.
    /// - Parameter endsProcess: the process exits after this run: what the run built is left for the exit to reclaim.
    func runOnce(_ graph: TaskGraph, endsProcess: Bool = false) async throws -> FinishedRun {
        var configuration = self.configuration
        // A file that cannot be written (a full disk) is said once, when it happens, and again in the summary.
        let writeFailures = WriteFailures { failure in Console.standardError.write(line: "warning: \(failure)") }
        // A cluster that cannot take the run is refused before the run is recorded.
        let executor = try makeExecutor(for: graph, configuration: configuration, writeFailures: writeFailures)
        let recorder = try startRecord(in: state.store, graph: graph, pipelineDirectory: pipelineDirectory, isNested: state.lock.isNested)
        // A run nested in this one names it in the history.
        configuration.environment[RunRecorder.runVariable] = "\(recorder.run.rawValue)"
        Console.standardOutput.reportFailures(to: writeFailures)
        Console.standardError.reportFailures(to: writeFailures)
        // The files first and the console last: each batch reaches the observers in this order, so the
        // trace (written on `run-finished`) and the events file have failed or not by the time a later
        // one writes `run-finished` with the exit status (docs/events.md).
        var observers: [any RunObserver] = []
        if let trace = settings.trace { observers.append(ChromeTraceWriter(path: trace, failures: writeFailures)) }
        observers.append(AttemptRecorder(store: state.store, run: recorder.run,
                                         fanOuts: Set(graph.nodes.filter(\.isDynamicFanOut).map(\.id)), lost: recorder.noteLost))
        if let events = Self.eventsObserver(path: eventsPath, failures: writeFailures) { observers.append(events) }
        observers.append(progressObserver(fileOutput: graph.pipeline.output, failures: writeFailures,
                                          terminalTasks: Set(graph.nodes.filter(\.spec.runsAlone).map(\.id))))

        let runner = Runner(graph: graph, configuration: configuration, executor: executor,
                            history: recorder, expectedDurations: { [store = state.store] in expectedDurations(of: graph, from: store) },
                            executorMessages: { lines in Console.standardError.write(lines: lines) })
        control.attach(runner)
        async let summary = runner.run()
        await ObserverHub.drain(runner.events, into: observers, beforeDelivering: { recorder.flush() })
        var result = await summary
        // After the run released its executor: the Slurm executor's worker steps are not processes left behind.
        result.leftBehind = stopLeftBehindProcesses(grace: configuration.terminationGrace)
        control.detach()
        for problem in recorder.finish(result, endTime: Date()) {
            Console.standardError.write(line: "warning: \(problem)")
        }
        let status = ExitStatus.of(result, writeFailures: writeFailures)
        messageConsole.write(lines: SummaryPrinter().render(result, writeFailures: writeFailures.all))
        if endsProcess {
            runner.leaveBookkeepingToExit()
            ExitReclaimed.park(graph)
        }
        return FinishedRun(summary: result, status: status)
    }
}

/// Makes this process the one that inherits what a task leaves behind outside its process group, and
/// reaps those once they exit (contract: "Exit codes and signals").
func adoptEscapedProcesses(reapingWith loop: EventLoop) {
    do {
        try OrphanReaper.becomeSubreaper()
        loop.reapOrphans()
    } catch {
        Console.standardError.write(line: "warning: processes that leave their task's process group may outlive the run: \(error)")
    }
}

/// Stops every process still descending from this one, counted by the task that started it.
func stopLeftBehindProcesses(grace: Double) -> [RunSummary.LeftBehind] {
    let stopped = DescendantSweep(grace: .milliseconds(Int64(grace * 1000))).run()
    var groups: [RunSummary.LeftBehind] = []
    for process in stopped {
        let task = process.task.map { TaskID($0) }
        if let index = groups.firstIndex(where: { $0.task == task }) {
            groups[index].processCount += 1
        } else {
            groups.append(RunSummary.LeftBehind(task: task, processCount: 1))
        }
    }
    return groups
}

extension RunContext {
    /// The executor the run's tasks go to: this machine's, or Slurm's after checking that the cluster can
    /// take the run; a cluster that cannot ends the command with exit status 2 before anything runs.
    private func makeExecutor(for graph: TaskGraph, configuration: RunConfiguration,
                              writeFailures: WriteFailures) throws -> any TaskExecutor {
        let local = LocalExecutor(loop: loop, logDirectory: configuration.logDirectory, failures: writeFailures, handoff: handoff)
        guard let mode = settings.slurmMode else { return local }
        do throws(SlurmSetupError) {
            return try SlurmExecutor.connect(graph: graph, mode: mode, configuration: configuration, local: local)
        } catch {
            Console.standardError.write(lines: error.problems.map { "error: \($0)" })
            throw ExitCode(ExitStatus.invalid)
        }
    }
}
