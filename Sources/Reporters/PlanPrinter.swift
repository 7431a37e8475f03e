import Execution
import Foundation
import JobGraphBasics
import PipelineModel
import TaskGraph

/// Renders `run --dry-run`: the tasks in an order they could start, with what decides their scheduling.
public struct PlanPrinter: Sendable {
    /// The overall limit the run would use (`--jobs`).
    public var jobs: Int

    public init(jobs: Int) {
        self.jobs = jobs
    }

    /// The plan as a title and a table, one row per task in an order they could start.
    /// - Parameter reasons: per graph node, why it would run or not (`RunForecast`): a `reason` column.
    public func render(_ graph: TaskGraph, processorCount: Int, reasons: [RunReason]? = nil) -> [String] {
        let layout = QueueLayout(graph: graph, jobs: jobs, processorCount: processorCount)
        var table = TextTable(header: ["step", "task", "queue", "priority", "qos", "needs", "notes"] + (reasons == nil ? [] : ["reason"]))
        for entry in entries(graph, layout: layout, reasons: reasons) {
            table.rows.append([
                entry.step.map(String.init) ?? "-", entry.task, entry.queue, entry.priority, entry.qos,
                entry.needs.isEmpty ? "-" : entry.needs.joined(separator: ", "), entry.notes.joined(separator: "; "),
            ] + (entry.reason.map { [$0] } ?? []))
        }
        let queueCount = Set(layout.queueOfTask).count
        let title = "plan for \(graph.pipeline.file): \(plural(graph.nodes.count, "task")) on \(plural(queueCount, "queue")), at most \(jobs) at once"
        return [title] + table.render()
    }

    /// `run --dry-run --json`: the plan as one JSON document, each task with the decision and reason.
    public func renderJSON(_ graph: TaskGraph, processorCount: Int, reasons: [RunReason]) -> String {
        let layout = QueueLayout(graph: graph, jobs: jobs, processorCount: processorCount)
        let document = PlanDocument(pipeline: graph.pipeline.file, jobs: jobs, tasks: entries(graph, layout: layout, reasons: reasons))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Strings, numbers and arrays of them only: encoding cannot fail.
        let data = (try? encoder.encode(document)) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The rows of the plan, in an order the tasks could start.
    private func entries(_ graph: TaskGraph, layout: QueueLayout, reasons: [RunReason]?) -> [PlanEntry] {
        let order = Plan(graph: graph, layout: layout, jobs: jobs, keepGoing: false).startOrder()
        // The start order assumes every task succeeds; what only a failure starts comes last, without a step.
        let started = Set(order)
        let steps: [(step: Int?, index: Int)] = order.enumerated().map { ($0.offset + 1, $0.element) }
            + graph.nodes.indices.filter { !started.contains($0) }.map { (nil, $0) }
        return steps.map { step, index in
            let node = graph.nodes[index]
            let reason = reasons.map { $0[index] }
            return PlanEntry(step: step, task: node.displayName, queue: layout.names[layout.queueOfTask[index]],
                             priority: node.spec.priority.rawValue, qos: (graph.qualityOfService(ofNode: index) ?? .default).rawValue,
                             needs: graph.dependencies[index].map { graph.nodes[$0].id.rawValue }, notes: notes(for: node),
                             decision: reason?.decision, reason: reason?.description)
        }
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



/// `run --dry-run --json`.
private struct PlanDocument: Encodable {
    var pipeline: String
    var jobs: Int
    var tasks: [PlanEntry]
}

/// One task of the plan.
private struct PlanEntry: Encodable {
    /// `nil` for a task that only a failure would start.
    var step: Int?
    var task: String
    var queue: String
    var priority: String
    var qos: String
    var needs: [String]
    var notes: [String]
    var decision: RunReason.Decision?
    var reason: String?
}
