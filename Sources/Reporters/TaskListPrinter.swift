import PipelineModel
import TaskGraph

/// Renders `jobgraph list`: each task as the file declares it, with its description.
public struct TaskListPrinter: Sendable {
    public init() {}

    public func render(_ pipeline: Pipeline) -> [String] {
        var table = TextTable(header: ["task", "description"])
        let defaults = Set((pipeline.defaultTasks ?? []).map(\.value))
        var shown = 0
        // An internal task runs only when needed, and cannot be named: not worth listing (docs/cli.md, "list").
        for task in pipeline.tasks where !task.isInternal {
            shown += 1
            var id = task.id.rawValue
            // What a bare `run` does with it: the `default:` tasks, and those only a name or a need runs.
            var notes: [String] = []
            if defaults.contains(task.id) { notes.append("default") }
            if task.isManual { notes.append("manual") }
            if !task.aliases.isEmpty { notes.append("aliases: " + task.aliases.map(\.value.rawValue).joined(separator: ", ")) }
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
        return [title + ": " + plural(shown, "task")] + table.render()
    }
}
