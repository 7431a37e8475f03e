import JobGraphBasics
import Execution
import PipelineModel
import TaskGraph

/// Renders `run --dry-run`: the tasks in an order they could start, with what decides their scheduling.
public struct PlanPrinter: Sendable {
    /// The overall limit the run would use (`--jobs`).
    public var jobs: Int

    public init(jobs: Int) {
        self.jobs = jobs
    }

    public func render(_ graph: TaskGraph, processorCount: Int) -> [String] {
        let layout = QueueLayout(graph: graph, jobs: jobs, processorCount: processorCount)
        let order = Plan(graph: graph, layout: layout, jobs: jobs, keepGoing: false).startOrder()
        var table = TextTable(header: ["step", "task", "queue", "priority", "qos", "needs", "notes"])
        for (step, index) in order.enumerated() {
            let node = graph.nodes[index]
            let needs = graph.dependencies[index].map { graph.nodes[$0].id.rawValue }
            table.rows.append([
                String(step + 1), node.displayName, layout.names[layout.queueOfTask[index]], node.spec.priority.rawValue,
                (graph.qualityOfService(ofNode: index) ?? .default).rawValue, needs.isEmpty ? "-" : needs.joined(separator: ", "),
                notes(for: node).joined(separator: "; "),
            ])
        }
        let queueCount = Set(layout.queueOfTask).count
        let title = "plan for \(graph.pipeline.file): \(plural(graph.nodes.count, "task")) on \(plural(queueCount, "queue")), at most \(jobs) at once"
        return [title] + table.render()
    }

    private func notes(for node: TaskNode) -> [String] {
        var notes: [String] = []
        let spec = node.spec
        if let action = describeAction(spec.action) { notes.append(action) }
        if let item = node.item { notes.append("item '\(item.value)'") }
        if node.isDynamicFanOut, case .file(let source)? = spec.foreach {
            notes.append("fan-out from \(source) at run time")
        }
        if spec.when != .success { notes.append("when \(spec.when.rawValue)") }
        notes += spec.gateNotes
        if spec.retries > 0 { notes.append("retries \(spec.retries)") }
        if let timeout = spec.timeout { notes.append("timeout \(DurationText.text(forSeconds: timeout))") }
        if spec.allowFailure { notes.append("failure allowed") }
        return notes
    }

    /// `run`, `run 3 commands`, `filter` …; `nil` for `parallel`, whose gate note counts its commands.
    private func describeAction(_ action: Action) -> String? {
        switch action {
        case .run(let commands): commands.count == 1 ? "run" : "run \(commands.count) commands"
        case .parallel: nil
        case .download, .filter: action.keyword
        }
    }
}

func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }


