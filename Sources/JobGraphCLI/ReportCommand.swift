import ArgumentParser
import Foundation
import Reporters
import StateStore

struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Write one run as a self-contained HTML page: timeline, critical path, slowest tasks, failures, task graph."
    )

    @OptionGroup var pipeline: PipelineOptions

    @Option(help: ArgumentHelp("The run to show, by its number in `jobgraph history` (default: the latest).", valueName: "N"))
    var run: Int64?

    @Option(name: [.short, .customLong("output")], help: ArgumentHelp("Where to write the page.", valueName: "FILE"))
    var output = "report.html"

    func run() async throws {
        let source = try pipeline.resolved()
        let graph = try checkedGraph(pipeline, file: source.file)
        let directory = source.directory
        let timeline: RunTimeline?
        do {
            timeline = FileManager.default.fileExists(atPath: StateStore.databasePath(inPipelineDirectory: directory))
                ? try StateStore.open(directory: directory).runTimeline(pipelineFile: source.file, run: run.map(RunID.init))
                : nil
        } catch {
            Console.standardError.write(line: "error: cannot read the history in \(directory)/.jobgraph: \(error)")
            throw ExitCode(ExitStatus.invalid)
        }
        guard let timeline else {
            let which = run.map { "no run \($0) of \(source.file) in the history" } ?? "no runs of \(source.file) yet"
            Console.standardError.write(line: "error: \(which); see `jobgraph history \(source.file)`")
            throw ExitCode(ExitStatus.invalid)
        }
        let page = RunReportPage(report: timeline.runReport, graph: graph).html()
        do {
            try Data(page.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
        } catch {
            Console.standardError.write(line: "error: cannot write '\(output)': \(error.localizedDescription)")
            throw ExitCode(ExitStatus.invalid)
        }
        Console.standardOutput.write(line: "wrote \(output) (run \(timeline.run.id) of \(timeline.run.pipeline))")
    }
}

extension RunTimeline {
    /// The history's record as the page shows it.
    var runReport: RunReport {
        let counts = run.tasks
        return RunReport(
            pipeline: run.pipeline, run: run.id.description, startedAt: run.startedAt, wallTime: run.duration,
            outcome: run.outcome.rawValue, jobs: jobs,
            counts: [("succeeded", counts.succeeded), ("failed", counts.failed), ("up-to-date", counts.upToDate),
                     ("skipped", counts.skipped), ("cancelled", counts.cancelled), ("unfinished", counts.unfinished)],
            attempts: attempts, criticalPath: criticalPath,
            finalStates: Dictionary(tasks.map { ($0.task, $0.state) }, uniquingKeysWith: { $1 }))
    }
}
