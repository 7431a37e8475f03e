import ArgumentParser
import Foundation
import JobGraphBasics
import PipelineRun
import Reporters
import TaskGraph

struct ExplainCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Say why a task, and each task it needs, would run or not; run nothing."
    )

    @OptionGroup var pipeline: PipelineOptions

    @Argument(help: "The task to explain (a fan-out's name explains each of its items).")
    var task: [String] = []

    @Flag(help: "As a run with --force would decide.")
    var force = false

    @OptionGroup var cache: CacheOptions

    func run() async throws {
        let (source, graph) = try checkedSelection(pipeline, tasks: task, forRun: true, previewingLists: true)
        var ignored = Diagnostics()  // `checkedSelection` reported any problem with the words
        let names = TaskArguments(source.tasks, diagnostics: &ignored).names
        guard names.count == 1, let name = names.first else {
            Console.standardError.write(line: "error: explain takes one task name, not \(names.count)")
            throw ExitCode(ExitStatus.invalid)
        }
        let configuration = runConfiguration(pipelineDirectory: source.directory, force: force, environment: ProcessInfo.processInfo.environment,
                                             processorCount: ProcessInfo.processInfo.activeProcessorCount)
        let reasons = try forecast(of: graph, configuration: configuration, outputCache: cache.settings(for: graph, configuration: configuration),
                                   warn: warn).reasons
        Console.standardOutput.write(lines: ExplainPrinter().render(graph, reasons: reasons, task: name))
    }
}
