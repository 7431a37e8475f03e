import PipelineModel
import TaskGraph

/// Renders `jobgraph list`: each task as the file declares it, with its description.
public struct TaskListPrinter: Sendable {
    public init() {}

    public func render(_ pipeline: Pipeline) -> [String] {
        var table = TextTable(header: ["task", "description"])
        for task in pipeline.tasks {
            var id = task.id.rawValue
            var notes: [String] = []
            switch task.foreach {
            case .items(let items)?:
                id += "[*]"
                let shown = items.prefix(5).map(\.value).joined(separator: ", ")
                notes.append("\(plural(items.count, "item")): \(shown)\(items.count > 5 ? ", …" : "")")
            case .file(let source)?:
                id += "[*]"
                notes.append("items from \(source) at run time")
            case nil:
                break
            }
            notes += task.gateNotes
            var description = task.description ?? ""
            if !notes.isEmpty { description += (description.isEmpty ? "" : " ") + "(" + notes.joined(separator: "; ") + ")" }
            table.rows.append([id, description])
        }
        let title = pipeline.name.map { "\($0) (\(pipeline.file))" } ?? pipeline.file
        return [title + ": " + plural(pipeline.tasks.count, "task")] + table.render()
    }
}
