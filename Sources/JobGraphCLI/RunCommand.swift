import JobGraphBasics
import ArgumentParser
import Execution
import Foundation
import JobGraphSystem
import Reporters
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
        if dryRun {
            Console.standardOutput.write(lines: PlanPrinter(jobs: jobs).render(graph, processorCount: processorCount))
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

        // A file that cannot be written (a full disk) is said once, when it happens, and again in the summary.
        let writeFailures = WriteFailures { failure in Console.standardError.write(line: "warning: \(failure)") }
        Console.standardOutput.reportFailures(to: writeFailures)
        Console.standardError.reportFailures(to: writeFailures)
        var observers: [any RunObserver] = [makeProgressObserver(mode: progress, console: .standardOutput, environment: environment)]
        if let trace { observers.append(ChromeTraceWriter(path: trace, failures: writeFailures)) }
        if let events {
            do {
                observers.append(try JSONLinesReporter(path: events, failures: writeFailures))
            } catch {
                Console.standardError.write(line: "error: \(error)")
                throw ExitCode(ExitStatus.invalid)
            }
        }

        let control = RunControlRelay()
        let loop = try EventLoop(signals: .runControl) { signal in control.deliver(signal) }
        defer { loop.stop() }
        let runner = Runner(graph: graph, configuration: configuration,
                            executor: LocalExecutor(loop: loop, logDirectory: configuration.logDirectory, failures: writeFailures),
                            history: recorder, expectedDurations: { [graph, store = state.store] in expectedDurations(of: graph, from: store) })
        control.attach(runner)

        async let summary = runner.run()
        await ObserverHub.drain(runner.events, into: observers)
        let result = await summary
        for problem in recorder.finish(result, endTime: Date()) { Console.standardError.write(line: "warning: \(problem)") }
        state.lock.release()
        // With JSON progress, standard output carries only events; the summary goes beside it.
        let summaryConsole: Console = progress == .json ? .standardError : .standardOutput
        summaryConsole.write(lines: SummaryPrinter().render(result, writeFailures: writeFailures.all))
        let status = ExitStatus.of(result, writeFailures: writeFailures)
        if status != ExitStatus.success { throw ExitCode(status) }
    }
}

extension ProgressMode: ExpressibleByArgument {}

/// Turns the signals the event loop reads into commands for the runner (contract: "Exit codes and signals").
final class RunControlRelay: Sendable {
    private let runner = RunnerReference()

    func attach(_ runner: Runner) { self.runner.set(runner) }

    /// Called on the event loop's thread.
    func deliver(_ signal: ProcessSignal) {
        guard let runner = runner.get() else { return }
        switch signal {
        case .interrupt: runner.control(.interrupt)
        case .terminate: runner.control(.terminate)
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
