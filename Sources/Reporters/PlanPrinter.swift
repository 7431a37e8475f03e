import Execution
import Foundation
import JobGraphBasics
import PipelineModel
import TaskGraph

/// Renders `run --dry-run`: the tasks in an order they could start, with what decides their scheduling.
public struct PlanPrinter: Sendable {
    /// The overall limit the run would use (`--jobs`).
    public var jobs: Int
    /// Set when the run would go to Slurm (`--executor slurm`): the plan then shows each task's Slurm options.
    public var slurmMode: SlurmMode?

    public init(jobs: Int, slurmMode: SlurmMode? = nil) {
        self.jobs = jobs
        self.slurmMode = slurmMode
    }

    /// The plan as a title and a table, one row per task in an order they could start.
    /// - Parameter reasons: per graph node, why it would run or not (`RunForecast`): a `reason` column.
    public func render(_ graph: TaskGraph, processorCount: Int, reasons: [RunReason]? = nil) -> [String] {
        let layout = QueueLayout(graph: graph, jobs: jobs, processorCount: processorCount)
        var table = TextTable(header: ["step", "task", "queue", "priority", "qos", "needs", "notes"]
                              + (reasons == nil ? [] : ["reason"]) + (slurmMode == nil ? [] : ["slurm"]))
        for entry in entries(graph, layout: layout, reasons: reasons) {
            let step: String = entry.step.map(String.init) ?? "-"
            let needs: String = entry.needs.isEmpty ? "-" : entry.needs.joined(separator: ", ")
            var row: [String] = [step, entry.task, entry.queue, entry.priority, entry.qos, needs, entry.notes.joined(separator: "; ")]
            if let reason = entry.reason { row.append(reason) }
            if let slurm = entry.slurm { row.append(slurm) }
            table.rows.append(row)
        }
        let queueCount = Set(layout.queueOfTask).count
        let title = "plan for \(graph.pipeline.file): \(plural(graph.nodes.count, "task")) on \(plural(queueCount, "queue")), at most \(jobs) at once"
        return [title] + slurmHeader(graph) + table.render()
    }

    /// Where the tasks go, in one line above the table.
    private func slurmHeader(_ graph: TaskGraph) -> [String] {
        guard let slurmMode else { return [] }
        let spec = graph.pipeline.slurm ?? SlurmSpec()
        switch slurmMode {
        case .allocation:
            let cpus = graph.nodes.map { graph.pipeline.slurm(for: $0.spec).cpus ?? 1 }.max() ?? 1
            return ["on Slurm, allocation mode: salloc --no-shell \(spec.allocationArguments(jobs: jobs, cpusPerTask: cpus).joined(separator: " "))"
                + (graph.pipeline.slurmRunsInWorkerSteps ? "; a worker step per slot runs the tasks (srun --exact -n1)" : "; each task a step (srun --exact -n1)")]
        case .jobs:
            return ["on Slurm, jobs mode: one sbatch per task, at most \(spec.queueSize ?? 100) queued at once"]
        }
    }

    /// A task's Slurm options, or where it runs instead.
    private func slurmColumn(for index: Int, in graph: TaskGraph, mode: SlurmMode) -> String {
        let node = graph.nodes[index]
        switch node.spec.action {
        case .download, .filter: return "runs in jobgraph's process"
        case .run, .parallel: break
        }
        if node.spec.service != nil { return "service: runs locally" }
        let niceness = (graph.qualityOfService(ofNode: index) ?? .default).niceness
        return graph.pipeline.slurm(for: node.spec).taskArguments(mode: mode, niceness: niceness, timeout: node.spec.timeout)
            .joined(separator: " ")
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
                             slurm: slurmMode.map { slurmColumn(for: index, in: graph, mode: $0) },
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
    /// The task's Slurm options, when the run would go to Slurm.
    var slurm: String?
    var decision: RunReason.Decision?
    var reason: String?
}
