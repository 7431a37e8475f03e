import ArgumentParser
import JobGraphBasics
import Reporters

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the pipeline's tasks with their descriptions."
    )

    @OptionGroup var pipeline: PipelineOptions

    @Argument(help: "Show this task's params (type, allowed values, default, help) instead.",
              completion: .custom { RunCompletion.candidates($0, cursor: $1, prefix: $2) })
    var task: String?

    func run() async throws {
        let source = try pipeline.resolved(tasks: task.map { [$0] } ?? [])
        let graph = try checkedGraph(pipeline, file: source.file)
        guard let name = source.tasks.first else {
            Console.standardOutput.write(lines: TaskListPrinter().render(graph.pipeline))
            return
        }
        guard let spec = graph.pipeline.tasks.first(where: { $0.id.rawValue == name }) else {
            let hint = Suggestion.hint(for: name, in: graph.pipeline.tasks.map(\.id.rawValue))
            Console.standardError.write(line: "error: unknown task '\(name)'\(hint)")
            throw ExitCode(ExitStatus.invalid)
        }
        Console.standardOutput.write(lines: TaskListPrinter().render(spec))
    }
}
