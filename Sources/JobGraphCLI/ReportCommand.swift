import ArgumentParser
import Foundation
import PipelineRun
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
        guard let timeline = try RunTimeline.read(pipelineFile: source.file, in: source.directory, run: run) else {
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
