import ArgumentParser
import JobGraphBasics
import Reporters
import TaskGraph

struct GraphCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graph",
        abstract: "Print the task graph for other tools: Graphviz dot, Mermaid or JSON."
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case dot, mermaid, json
    }

    @OptionGroup var pipeline: PipelineOptions

    @Option(help: "dot, mermaid or json.")
    var format: Format = .dot

    @Argument(help: "Only these tasks and what they need.")
    var tasks: [String] = []

    func run() async throws {
        let graph = try checkedSelection(pipeline, tasks: tasks, previewingLists: true).graph
        let text = switch format {
        case .dot: graph.dotText
        case .mermaid: graph.mermaidText
        case .json: try graph.jsonText
        }
        Console.standardOutput.write(text.hasSuffix("\n") ? text : text + "\n")
    }
}
