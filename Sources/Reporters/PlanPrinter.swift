import Execution
import Foundation
import JobGraphBasics
import PipelineModel
import TaskGraph

/// Renders `run --dry-run`: the tasks in an order they could start, with what decides their scheduling.
public struct PlanPrinter: Sendable {
    /// The overall limit the run would use (`--jobs`).
    public var jobs: Int
    /// What tells how the run's executor would run each task (`--executor slurm`: its Slurm options), in
    /// lines above the table and a column of its own; `nil` for the local executor, which adds none.
    public var executor: (any TaskDescribing)?
    /// The totals the run's tasks share (`RunConfiguration.resources`).
    public var resources: Resources

    public init(jobs: Int, executor: (any TaskDescribing)? = nil, resources: Resources = Resources()) {
        self.jobs = jobs
        self.executor = executor
        self.resources = resources
    }

    /// The plan as a title and a table, one row per task in an order they could start.
    /// - Parameter reasons: per graph node, why it would run or not (`RunForecast`): a `reason` column.
    public func render(_ graph: TaskGraph, processorCount: Int, reasons: [RunReason]? = nil) -> [String] {
        let layout = QueueLayout(graph: graph, jobs: jobs, processorCount: processorCount)
        let column = executor?.describedColumn
        var table = TextTable(header: ["step", "task", "queue", "priority", "qos", "needs", "notes"]
                              + (reasons == nil ? [] : ["reason"]) + (column.map { [$0] } ?? []))
        for entry in entries(graph, layout: layout, reasons: reasons) {
            let step: String = entry.step.map(String.init) ?? "-"
            let needs = Self.needsCell(entry.needs)
            var row: [String] = [step, entry.task, entry.queue, entry.priority, entry.qos, needs, entry.notes.joined(separator: "; ")]
            if let reason = entry.reason { row.append(reason) }
            if let described = entry.executor { row.append(described.text) }
            table.rows.append(row)
        }
        let queueCount = Set(layout.queueOfTask).count
        var title = "plan for \(graph.pipeline.file): \(String(counting: graph.nodes.count, "task")) on \(String(counting: queueCount, "queue")), at most \(jobs) at once"
        if graph.pipeline.declaresResources {
            title += "; resources " + resources.amounts.map { "\($0.name) \(Resources.text($0.value, of: $0.name))" }.joined(separator: ", ")
        }
        return [title] + (executor?.describeRun(of: graph) ?? []) + table.render()
    }

    /// Past this many, the table's `needs` cell names the first ones and counts the rest: a task that needs
    /// 20,000 items made every row of the table 200 kB wide (`--json` lists them all).
    static let neededShown = 4

    /// `a, b`, or `a, b, c, d and 19,996 more`; `-` for none.
    static func needsCell(_ needs: [String]) -> String {
        guard !needs.isEmpty else { return "-" }
        guard needs.count > neededShown else { return needs.joined(separator: ", ") }
        return needs.prefix(neededShown).joined(separator: ", ") + " and \(needs.count - neededShown) more"
    }

    /// `run --dry-run --json`: the plan as one JSON document, each task with the decision and reason.
    public func renderJSON(_ graph: TaskGraph, processorCount: Int, reasons: [RunReason]) -> String {
        let layout = QueueLayout(graph: graph, jobs: jobs, processorCount: processorCount)
        let totals = graph.pipeline.declaresResources ? Dictionary(resources.amounts.map { ($0.name, $0.value) }) { $1 } : nil
        let document = PlanDocument(pipeline: graph.pipeline.file, jobs: jobs, resources: totals,
                                    tasks: entries(graph, layout: layout, reasons: reasons))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Strings, numbers and arrays of them only: encoding cannot fail.
        let data = (try? encoder.encode(document)) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The rows of the plan, in an order the tasks could start.
    private func entries(_ graph: TaskGraph, layout: QueueLayout, reasons: [RunReason]?) -> [PlanEntry] {
        let order = Plan(graph: graph, layout: layout, jobs: jobs, keepGoing: false, resources: resources).startOrder()
        // The start order assumes every task succeeds; what only a failure starts comes last, without a step.
        let started = Set(order)
        let steps: [(step: Int?, index: Int)] = order.enumerated().map { ($0.offset + 1, $0.element) }
            + graph.nodes.indices.filter { !started.contains($0) }.map { (nil, $0) }
        return steps.map { step, index in
            let node = graph.nodes[index]
            let reason = reasons.map { $0[index] }
            return PlanEntry(step: step, task: node.displayName, queue: layout.names[layout.queueOfTask[index]],
                             priority: node.spec.priority.rawValue, qos: (graph.qualityOfService(ofNode: index) ?? .default).rawValue,
                             needs: graph.dependencies[index].map { graph.nodes[$0].id.rawValue },
                             inferredNeeds: graph.dependencies[index].indices.filter { graph.isFoundFromFiles(node: index, edge: $0) }
                                 .map { graph.nodes[graph.dependencies[index][$0]].id.rawValue },
                             notes: notes(for: node),
                             resources: node.spec.resources.map { Dictionary($0.amounts.map { ($0.name, $0.value) }) { $1 } },
                             executor: describedExecutor(index, in: graph),
                             decision: reason?.decision, reason: reason?.description)
        }
    }

    /// What the executor says of the task of node `index`, under the name of its column.
    private func describedExecutor(_ index: Int, in graph: TaskGraph) -> PlanEntry.Described? {
        guard let executor, let column = executor.describedColumn else { return nil }
        return PlanEntry.Described(column: column, text: executor.describe(node: index, of: graph) ?? "")
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
        if spec.retries > 0 {
            let causes = spec.retryOn.map { " on " + $0.map(\.text).joined(separator: ", ") } ?? ""
            notes.append("retries \(spec.retries)\(causes)")
        }
        if let timeout = spec.timeout { notes.append("timeout \(DurationText.text(forSeconds: timeout))") }
        if spec.allowFailure { notes.append("failure allowed") }
        if let resources = spec.resources, !resources.amounts.isEmpty {
            notes.append("resources " + resources.amounts.map { "\($0.name) \(Resources.text($0.value, of: $0.name))" }.joined(separator: ", "))
        }
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




/// `run --dry-run --json`.
private struct PlanDocument: Encodable {
    var pipeline: String
    var jobs: Int
    /// The totals, when the pipeline declares resources: `mem` in bytes.
    var resources: [String: Int64]?
    var tasks: [PlanEntry]
}

/// One task of the plan.
private struct PlanEntry: Encodable {
    /// What the executor says of a task, and the name of the column (and JSON key) it goes under.
    struct Described {
        var column: String
        var text: String
    }

    /// `nil` for a task that only a failure would start.
    var step: Int?
    var task: String
    var queue: String
    var priority: String
    var qos: String
    var needs: [String]
    /// The needs found from files (docs/pipeline.md, "Dependencies found from files"), in the JSON only.
    var inferredNeeds: [String]
    var notes: [String]
    /// The task's `resources`, `mem` in bytes; in the JSON only (the table has them in `notes`).
    var resources: [String: Int64]?
    /// When the run's executor describes its tasks (`--executor slurm`).
    var executor: Described?
    var decision: RunReason.Decision?
    var reason: String?

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// As a synthesized encoding would, with the executor's text under its column's name.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encodeIfPresent(step, forKey: Key("step"))
        try container.encode(task, forKey: Key("task"))
        try container.encode(queue, forKey: Key("queue"))
        try container.encode(priority, forKey: Key("priority"))
        try container.encode(qos, forKey: Key("qos"))
        try container.encode(needs, forKey: Key("needs"))
        try container.encode(inferredNeeds, forKey: Key("inferred_needs"))
        try container.encode(notes, forKey: Key("notes"))
        try container.encodeIfPresent(resources, forKey: Key("resources"))
        if let executor { try container.encode(executor.text, forKey: Key(executor.column)) }
        try container.encodeIfPresent(decision, forKey: Key("decision"))
        try container.encodeIfPresent(reason, forKey: Key("reason"))
    }
}
