import ArgumentParser
import Reporters

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the pipeline's tasks with their descriptions."
    )

    @OptionGroup var pipeline: PipelineOptions

    func run() async throws {
        let graph = try checkedGraph(pipeline, file: try pipeline.resolved().file)
        Console.standardOutput.write(lines: TaskListPrinter().render(graph.pipeline))
    }
}
