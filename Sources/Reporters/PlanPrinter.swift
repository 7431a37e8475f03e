import JobGraphBasics
import Execution
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

    public func render(_ graph: TaskGraph, processorCount: Int) -> [String] {
        let layout = QueueLayout(graph: graph, jobs: jobs, processorCount: processorCount)
        let order = Plan(graph: graph, layout: layout, jobs: jobs, keepGoing: false).startOrder()
        var table = TextTable(header: ["step", "task", "queue", "priority", "qos", "needs", "notes"] + (slurmMode == nil ? [] : ["slurm"]))
        for (step, index) in order.enumerated() {
            let node = graph.nodes[index]
            let needs = graph.dependencies[index].map { graph.nodes[$0].id.rawValue }
            table.rows.append([
                String(step + 1), node.displayName, layout.names[layout.queueOfTask[index]], node.spec.priority.rawValue,
                (graph.qualityOfService(ofNode: index) ?? .default).rawValue, needs.isEmpty ? "-" : needs.joined(separator: ", "),
                notes(for: node).joined(separator: "; "),
            ] + (slurmMode.map { [slurmColumn(for: index, in: graph, mode: $0)] } ?? []))
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
            return ["on Slurm, allocation mode: salloc --no-shell \(spec.allocationArguments(jobs: jobs, cpusPerTask: cpus).joined(separator: " ")); each task a step (srun --exact -n1)"]
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


