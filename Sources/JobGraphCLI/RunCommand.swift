import JobGraphBasics
import ArgumentParser
import Execution
import Foundation
import JobGraphSystem
import PipelineModel
import Reporters
import SlurmExecutor
import Steps
import TaskGraph

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the pipeline, or only the named tasks and what they need."
    )

    @OptionGroup var pipeline: PipelineOptions

    @Argument(help: "Run only these tasks and what they need.")
    var tasks: [String] = []

    @Flag(help: "Check the pipeline and print the plan; run nothing.")
    var dryRun = false

    @Option(help: "Most tasks executing at once overall (default: the number of CPUs).")
    var jobs: Int?

    @Flag(help: "After a failure, keep starting tasks that do not depend on it.")
    var keepGoing = false

    @Option(help: "How to show progress: auto, tty, plain or json.")
    var progress: ProgressMode = .auto

    @Option(help: ArgumentHelp("Also write every event as JSON Lines to this file.", valueName: "FILE"))
    var events: String?

    @Option(help: ArgumentHelp("Write the run as Chrome trace-event JSON (Perfetto, chrome://tracing).", valueName: "FILE"))
    var trace: String?

    @Flag(help: "Ignore up-to-date checks: run every selected task.")
    var force = false

    @Flag(help: "If another run of this pipeline holds its state, wait for it instead of exiting.")
    var wait = false

    @Option(help: "Where tasks run: local or slurm (default: the file's 'executor', else local).")
    var executor: ExecutorKind?

    @Option(help: "With slurm: allocation (one allocation, a job step per task) or jobs (a batch job per task).")
    var slurmMode: SlurmMode?

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("'--jobs' must be at least 1") }
    }

    /// Whether this invocation runs tasks (and so handles signals itself).
    var runsTasks: Bool { !dryRun }

    func run() async throws {
        var graph = try checkedGraph(pipeline)
        if !tasks.isEmpty { graph = try selected(tasks, from: graph) }
        let processorCount = ProcessInfo.processInfo.activeProcessorCount
        let jobs = self.jobs ?? processorCount
        let slurmMode = (executor ?? graph.pipeline.executor) == .slurm
            ? self.slurmMode ?? graph.pipeline.slurm?.mode ?? .allocation : nil
        if dryRun {
            Console.standardOutput.write(lines: PlanPrinter(jobs: jobs, slurmMode: slurmMode).render(graph, processorCount: processorCount))
            return
        }
        let environment = ProcessInfo.processInfo.environment
        let pipelineDirectory = URL(fileURLWithPath: pipeline.file).deletingLastPathComponent().standardizedFileURL.path
        var configuration = RunConfiguration(
            jobs: jobs, keepGoing: keepGoing, pipelineDirectory: pipelineDirectory,
            stateDirectory: pipelineDirectory + "/.jobgraph", environment: environment, processorCount: processorCount)
        configuration.force = force
        let state = try openState(in: pipelineDirectory, wait: wait)
        let recorder = try startRecord(in: state.store, graph: graph, pipelineDirectory: pipelineDirectory)

        var observers: [any RunObserver] = [makeProgressObserver(mode: progress, console: .standardOutput, environment: environment)]
        if let trace { observers.append(ChromeTraceWriter(path: trace)) }
        if let events {
            do {
                observers.append(try JSONLinesReporter(path: events))
            } catch {
                Console.standardError.write(line: "error: \(error)")
                throw ExitCode(ExitStatus.invalid)
            }
        }

        let control = RunControlRelay()
        let loop = try EventLoop(signals: .runControl) { signal in control.deliver(signal) }
        defer { loop.stop() }
        let localExecutor = LocalExecutor(loop: loop, logDirectory: configuration.logDirectory)
        var slurm: SlurmExecutor?
        if let slurmMode {
            let executor = try slurmExecutor(mode: slurmMode, graph: graph, configuration: configuration, local: localExecutor)
            control.onStop = { executor.cancelRun() }
            slurm = executor
        }
        let executor: any TaskExecutor = slurm ?? localExecutor
        let runner = Runner(graph: graph, configuration: configuration, executor: executor,
                            history: recorder, durations: expectedDurations(of: graph, from: state.store))
        control.attach(runner)

        async let summary = runner.run()
        await ObserverHub.drain(runner.events, into: observers)
        let result = await summary
        let slurmNotes = slurm?.finish() ?? []
        for problem in recorder.finish(result, endTime: Date()) { Console.standardError.write(line: "warning: \(problem)") }
        state.lock.release()
        // With JSON progress, standard output carries only events; the summary goes beside it.
        let summaryConsole: Console = progress == .json ? .standardError : .standardOutput
        summaryConsole.write(lines: SummaryPrinter().render(result) + slurmNotes)
        let status = ExitStatus.of(result)
        if status != ExitStatus.success { throw ExitCode(status) }
    }
}

extension ProgressMode: ExpressibleByArgument {}
extension ExecutorKind: ExpressibleByArgument {}
extension SlurmMode: ExpressibleByArgument {}

/// The Slurm executor, after checking the cluster can take the run; a cluster that cannot ends the
/// command with exit status 2 before anything runs.
private func slurmExecutor(mode: SlurmMode, graph: TaskGraph, configuration: RunConfiguration,
                           local: any TaskExecutor) throws -> SlurmExecutor {
    do throws(SlurmSetupError) {
        let cluster = try SlurmCluster.connect(environment: configuration.environment)
        let problems = cluster.problems(in: graph, mode: mode, jobs: configuration.jobs)
        if !problems.isEmpty { throw SlurmSetupError(problems) }
        let executor = SlurmExecutor(cluster: cluster, graph: graph, mode: mode, jobs: configuration.jobs, local: local,
                                     stateDirectory: configuration.stateDirectory, environment: configuration.environment)
        Console.standardError.write(line: try executor.prepare())
        return executor
    } catch {
        Console.standardError.write(lines: error.problems.map { "error: \($0)" })
        throw ExitCode(ExitStatus.invalid)
    }
}

/// Turns the signals the event loop reads into commands for the runner (contract: "Exit codes and signals").
final class RunControlRelay: Sendable {
    private let runner = RunnerReference()
    private let stopHook = Locked<(@Sendable () -> Void)?>(nil)

    /// Called once a signal asks the run to stop, before the runner hears of it (the Slurm executor
    /// cancels the run's jobs there, in one call).
    var onStop: (@Sendable () -> Void)? {
        get { stopHook.withLock { $0 } }
        set { stopHook.withLock { $0 = newValue } }
    }

    func attach(_ runner: Runner) { self.runner.set(runner) }

    /// Called on the event loop's thread.
    func deliver(_ signal: ProcessSignal) {
        guard let runner = runner.get() else { return }
        switch signal {
        case .interrupt:
            onStop?()
            runner.control(.interrupt)
        case .terminate:
            onStop?()
            runner.control(.terminate)
        case .user1: runner.control(.suspend)
        case .user2: runner.control(.resume)
        case .terminalStop:
            // Ctrl-Z: stop the tasks' process groups, then this process, as a shell's job control would.
            runner.control(.pauseProcesses)
            raise(SIGSTOP)
        case .continue: runner.control(.continueProcesses)
        default: break
        }
    }
}

/// The runner, set once after the event loop that delivers signals to it exists.
private final class RunnerReference: Sendable {
    private let value = Locked<Runner?>(nil)
    func set(_ runner: Runner) { value.withLock { $0 = runner } }
    func get() -> Runner? { value.withLock { $0 } }
}
