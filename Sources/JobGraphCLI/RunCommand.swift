import JobGraphBasics
import ArgumentParser
import Execution
import Foundation
import JobGraphSystem
import PipelineModel
import PipelineRun
import Reporters
import SlurmExecutor
import StateStore
import Steps
import TaskGraph

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the pipeline, or only the named tasks and what they need."
    )

    @OptionGroup var pipeline: PipelineOptions

    @Argument(help: ArgumentHelp("Run only these tasks and what they need; NAME=VALUE after a task's name gives it a param.",
                                 valueName: "task"),
              completion: .custom { RunCompletion.candidates($0, cursor: $1, prefix: $2) })
    var tasks: [String] = []

    @Flag(name: [.customShort("n"), .long], help: "Check the pipeline and print the plan, with why each task would run or not; run nothing.")
    var dryRun = false

    @Flag(help: "With --dry-run: print the plan as one JSON document.")
    var json = false

    @Flag(help: "Say on the line where each task starts why it runs, or why it is up to date.")
    var explain = false

    @Option(name: [.customShort("j"), .long], help: "Most tasks executing at once overall (default: the number of CPUs).")
    var jobs: Int?

    @Option(help: ArgumentHelp("Totals the tasks' resources share, over the file's 'resources': NAME=AMOUNT,… such as mem=16G,gpus=0.",
                               valueName: "totals"))
    var resources: String?

    @Flag(name: [.customShort("k"), .long], help: "After a failure, keep starting tasks that do not depend on it.")
    var keepGoing = false

    @Option(help: "How to show progress: auto, tty, plain or json.")
    var progress: ProgressMode = .auto

    @Option(help: "How tasks' output is shown: prefixed (default), grouped or interleaved; overrides 'output' in the file.")
    var output: OutputMode?

    @Option(help: ArgumentHelp("Also write every event as JSON Lines to this file.", valueName: "FILE"))
    var events: String?

    @Option(help: ArgumentHelp("Write the run as Chrome trace-event JSON (Perfetto, chrome://tracing).", valueName: "FILE"))
    var trace: String?

    @Flag(help: "Ignore up-to-date checks: run every selected task.")
    var force = false

    @OptionGroup var cache: CacheOptions

    @Flag(name: [.customShort("y"), .long], help: "Answer yes to every task's prompt without asking.")
    var yes = false

    @Flag(help: "If another run of this pipeline holds its state, wait for it instead of exiting.")
    var wait = false

    @Flag(help: "After the run, watch the selected tasks' inputs and the pipeline file; on a change, run again.")
    var watch = false

    @Option(help: "Where tasks run: local or slurm (default: the file's 'executor', else local).")
    var executor: ExecutorKind?

    @Option(help: "With slurm: allocation (one allocation, worker steps in it run the tasks) or jobs (a batch job per task).")
    var slurmMode: SlurmMode?

    @Flag(help: "With slurm: cancel the jobs a killed run left in Slurm, instead of taking them over.")
    var noReattach = false

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("'--jobs' must be at least 1") }
        if case .failure(let error)? = resources.map(Resources.parseOption) { throw ValidationError(error.message) }

        if watch && dryRun { throw ValidationError("'--watch' runs tasks; it cannot go with '--dry-run'") }
        if json && !dryRun { throw ValidationError("'--json' applies only with '--dry-run'; for a run's events use '--progress json'") }
    }

    /// Whether this invocation runs tasks (and so handles signals itself).
    var runsTasks: Bool { !dryRun }

    func run() async throws {
        let source = try pipeline.resolved(tasks: tasks)
        // With a state to check against, the run lock is taken first, so that the up-to-date checks' reads
        // of the store go on on the other core while the pipeline loads (`StateStore.readUpToDateBatchAhead`).
        var earlySession: PipelineSession?
        if !dryRun, !watch, !force, access(StateStore.databasePath(inPipelineDirectory: source.directory), F_OK) == 0 {
            let session = try openSession(in: source.directory, file: source.file)
            session.store.readUpToDateBatchAhead()
            earlySession = session
        }
        let graph = reportedSelection(source, variableOverrides: pipeline.variableOverrides, previewingLists: dryRun)
        // A SIGINT or SIGTERM that came while the pipeline loaded (and stopped its `sh` commands) ends the
        // command, as it would have ended it uncaught: taken by the session's loop, or still pending.
        if let stop = earlySession?.control.takePendingStop() ?? RunControlRelay.stopStillPending() {
            earlySession?.close()
            throw ExitCode(RunExitStatus.of(stop))
        }
        guard let graph else {
            earlySession?.close()
            throw ExitCode(ExitStatus.invalid)
        }
        var configuration = runConfiguration(pipelineDirectory: source.directory, jobs: jobs, keepGoing: keepGoing, force: force,
                                             environment: ProcessInfo.processInfo.environment,
                                             processorCount: ProcessInfo.processInfo.activeProcessorCount)
        configuration.answersPrompts = yes
        guard let configured = withResources(of: graph, configuration) else {
            earlySession?.close()
            throw ExitCode(ExitStatus.invalid)
        }
        configuration = configured
        let slurmMode = (executor ?? graph.pipeline.executor) == .slurm
            ? self.slurmMode ?? graph.pipeline.slurm?.mode ?? .allocation : nil
        if slurmMode != nil, case let diagnostics = SlurmExecutor.terminalTaskDiagnostics(in: graph), diagnostics.hasErrors {
            earlySession?.close()
            report(diagnostics)
            throw ExitCode(ExitStatus.invalid)
        }
        if dryRun {
            let reasons = try forecast(of: graph, configuration: configuration, outputCache: cache.settings(for: graph, configuration: configuration),
                                       warn: warn).reasons
            let printer = PlanPrinter(jobs: configuration.jobs, executor: slurmMode.map { SlurmPlanDescription(mode: $0, jobs: configuration.jobs) },
                                      resources: configuration.resources)
            if json {
                Console.standardOutput.write(line: printer.renderJSON(graph, processorCount: configuration.processorCount, reasons: reasons))
            } else {
                Console.standardOutput.write(lines: printer.render(graph, processorCount: configuration.processorCount, reasons: reasons))
            }
            return
        }
        let session = try earlySession ?? openSession(in: source.directory, file: source.file)
        defer { session.close() }
        let status: Int32
        if watch {
            // An edited file's resources are its own: a task asking more than a total is a broken edit.
            let watching = WatchSession(session: session, configuration: configuration, file: source.file) { [variableOverrides = pipeline.variableOverrides] in
                reportedSelection(source, variableOverrides: variableOverrides).flatMap { graph in
                    withResources(of: graph, configuration).map { (graph, $0) }
                }
            } say: { [messageConsole] line, isWarning in
                isWarning ? warn(line) : messageConsole.write(line: line)
            }
            status = try await watching.run(graph) { graph, configuration in
                try await runOnce(graph, configuration: configuration, in: session, slurmMode: slurmMode)
            }
        } else {
            status = try await runOnce(graph, configuration: configuration, in: session, slurmMode: slurmMode, endsProcess: true).status
        }
        if status != ExitStatus.success { throw ExitCode(status) }
    }

    /// `configuration` with `graph`'s resource totals (the file's, `--resources`, the machine's memory), or
    /// `nil` once it has reported a task that asks more than a total.
    private func withResources(of graph: TaskGraph, _ configuration: RunConfiguration) -> RunConfiguration? {
        var configuration = configuration
        let option = try? resources.map(Resources.parseOption)?.get()  // checked in `validate`
        configuration.resources = Resources.totals(declared: graph.pipeline.resources, option: option, machineMemory: MachineMemory.total)
        configuration.resourceSources = [:]
        for total in configuration.resources.amounts {
            configuration.resourceSources[total.name] = TotalSource(of: total.name, declared: graph.pipeline.resources, option: option)
        }
        let diagnostics = Resources.excessDiagnostics(of: graph.nodes.lazy.map(\.spec), totals: configuration.resources,
                                                      declared: graph.pipeline.resources, option: option, jobs: configuration.jobs)
        if diagnostics.hasErrors {
            report(diagnostics)
            return nil
        }
        return configuration
    }

    /// Opens the pipeline's state (taking its run lock) and event loop, and truncates the `--events` file,
    /// which each run then appends to.
    private func openSession(in directory: String, file: String) throws -> PipelineSession {
        let session = try PipelineSession(pipelineDirectory: directory, pipelineFile: file, wait: wait, warn: warn)
        do {
            try events.map { path throws(EventFileError) in try EventFile(path: path) }?.close()
        } catch {
            session.close()
            Console.standardError.write(line: "error: \(error)")
            throw ExitCode(ExitStatus.invalid)
        }
        return session
    }
}

extension ProgressMode: ExpressibleByArgument {}
extension OutputMode: ExpressibleByArgument {}
extension ExecutorKind: ExpressibleByArgument {}
extension SlurmMode: ExpressibleByArgument {}
