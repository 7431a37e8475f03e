import JobGraphBasics
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
                notes.append("\(String(counting: items.count, "item")): \(shown)\(items.count > 5 ? ", …" : "")")
            case .file(let source)?:
                id += "[*]"
                notes.append("items from \(source) at run time")
            case nil:
                break
            }
            if !task.parameters.isEmpty {
                notes.append("params: " + task.parameters.map { $0.isRequired ? "\($0.name) (required)" : $0.name }.joined(separator: ", "))
            }
            notes += task.gateNotes
            var description = task.description ?? ""
            if !notes.isEmpty { description += (description.isEmpty ? "" : " ") + "(" + notes.joined(separator: "; ") + ")" }
            table.rows.append([id, description])
        }
        let title = pipeline.name.map { "\($0) (\(pipeline.file))" } ?? pipeline.file
        return [title + ": " + String(counting: shown, "task")] + table.render()
    }

    /// Renders `jobgraph list TASK`: the task's id and description, then a row per param with its type,
    /// allowed values, default (or whether it is required) and help.
    public func render(_ task: TaskSpec) -> [String] {
        var lines = [task.id.rawValue + (task.description.map { ": \($0)" } ?? "")]
        guard !task.parameters.isEmpty else { return lines + ["takes no params"] }
        var table = TextTable(header: ["param", "type", "default", "help"])
        for parameter in task.parameters {
            let type = parameter.kind.rawValue + (parameter.allowed.map { ": " + $0.joined(separator: "|") } ?? "")
            let value = parameter.isRequired ? "(required)" : parameter.defaultValue.map { $0.isEmpty ? "\"\"" : $0 } ?? "\"\""
            table.rows.append([parameter.name, type, value, parameter.help ?? ""])
        }
        lines.append("usage: jobgraph run \(task.id.rawValue) " + task.parameters.map { "\($0.name)=…" }.joined(separator: " "))
        return lines + table.render()
    }
}
