import ArgumentParser
import Reporters
import TaskGraph

struct ValidateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a pipeline without running it; print every error as FILE:LINE:COLUMN: error: message."
    )

    @OptionGroup var pipeline: PipelineOptions

    func run() async throws {
        let source = try pipeline.resolved()
        let file = source.file
        let graph = try checkedGraph(pipeline, file: file, fileNeedsIn: source.directory)
        Console.standardOutput.write(line: "\(file): valid, \(graph.nodes.count) tasks, \(graph.dependencies.totalCount) dependencies")
        graph.keepUntilExit()
    }
}
