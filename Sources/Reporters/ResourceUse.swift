import Execution
import PipelineModel
import TaskGraph

/// What the executing tasks hold against the run's totals, for the live board: `cpus 2/2 · mem 12G/32G ·
/// gpus 1/2` (docs/pipeline.md, "Resources"). Made only for a pipeline that declares resources.
public struct ResourceUse: Sendable {
    /// `cpus` (total `--jobs`) first, then each limited resource, in the order of the totals.
    private let names: [String]
    private let totals: [Int64]
    /// Per task that holds anything: its amount of each name.
    private let amounts: [TaskID: [Int64]]
    /// Per dynamic fan-out: what each of its items (`map[3]`) holds; the fan-out itself holds nothing.
    private let itemAmounts: [TaskID: [Int64]]
    private var inUse: [Int64]
    private var holders: Set<TaskID> = []

    /// - Parameters:
    ///   - totals: `RunConfiguration.resources`.
    ///   - jobs: `--jobs`, the total of `cpus`.
    public init(graph: TaskGraph, totals: Resources, jobs: Int) {
        let limited = totals.amounts.filter { $0.name != Resources.cpus }
        names = [Resources.cpus] + limited.map(\.name)
        self.totals = [Int64(jobs)] + limited.map(\.value)
        inUse = Array(repeating: 0, count: names.count)
        var amounts: [TaskID: [Int64]] = [:], itemAmounts: [TaskID: [Int64]] = [:]
        for node in graph.nodes {
            // As the Plan counts them: slots at most `--jobs`, each amount at most its total.
            let row = [Int64(min(node.spec.slotCount, jobs))]
                + limited.map { min(node.spec.resources?[$0.name] ?? 0, $0.value) }
            if node.isDynamicFanOut { itemAmounts[node.id] = row } else { amounts[node.id] = row }
        }
        self.amounts = amounts
        self.itemAmounts = itemAmounts
    }

    /// Follows one transition: a task holds its amounts while it executes.
    mutating func record(_ transition: TaskTransition) {
        if transition.to == .executing, let row = amounts(of: transition.task), holders.insert(transition.task).inserted {
            for index in row.indices { inUse[index] += row[index] }
        } else if transition.to != .executing, holders.remove(transition.task) != nil, let row = amounts(of: transition.task) {
            for index in row.indices { inUse[index] -= row[index] }
        }
    }

    /// `cpus 2/2 · mem 12G/32G · gpus 1/2`.
    var text: String {
        names.indices.map { index in
            "\(names[index]) \(Resources.text(inUse[index], of: names[index]))/\(Resources.text(totals[index], of: names[index]))"
        }.joined(separator: " · ")
    }

    private func amounts(of task: TaskID) -> [Int64]? {
        if let row = amounts[task] { return row }
        // An item of a dynamic fan-out, `map[3]`, holds what its fan-out task asks.
        guard task.rawValue.hasSuffix("]"), let bracket = task.rawValue.lastIndex(of: "[") else { return nil }
        return itemAmounts[TaskID(String(task.rawValue[..<bracket]))]
    }
}
