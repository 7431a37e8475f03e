import ArgumentParser
import Reporters

struct ValidateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a pipeline without running it; print every error as FILE:LINE:COLUMN: error: message."
    )

    @OptionGroup var pipeline: PipelineOptions

    func run() async throws {
        let graph = try checkedGraph(pipeline)
        let edges = graph.dependencies.totalCount
        Console.standardOutput.write(line: "\(pipeline.file): valid, \(graph.nodes.count) tasks, \(edges) dependencies")
    }
}
