import Execution
import PipelineModel
import TaskGraph

/// Renders `jobgraph explain FILE TASK`: the task, then what it needs, depth first, each task once, each
/// with why it would run or not (the dry run's reasons), indented under the first task that needs it:
///
///     use: runs because input 'a.txt' changed
///       gen: up-to-date
///       fetch (needed: it writes 'data.csv'): up-to-date
public struct ExplainPrinter: Sendable {
    public init() {}

    /// - Parameters:
    ///   - reasons: per graph node (`RunForecast`).
    ///   - task: the task to explain: a task id or alias, the name of a fan-out, whose items are explained
    ///     in turn, or an include's name, whose goal's tasks are.
    public func render(_ graph: TaskGraph, reasons: [RunReason], task: String) -> [String] {
        var lines: [String] = []
        var seen = Set<Int>()
        // An alias means its task; an include's name, the tasks of its goal.
        let names = Set(graph.pipeline.includedGoals[task]?.map(\.rawValue) ?? [graph.resolvedName(task)])
        let roots = graph.nodes.indices.filter { names.contains(graph.nodes[$0].id.rawValue) || names.contains(graph.nodes[$0].baseID.rawValue) }
        // An explicit stack: a chain of thousands of needs would overflow a recursive walk.
        var stack = roots.reversed().map { (index: $0, depth: 0, writes: String?.none) }
        while let (index, depth, writes) = stack.popLast() {
            guard seen.insert(index).inserted else { continue }
            // A need no `needs` entry wrote says which file made it.
            let why = writes.map { " (needed: it writes '\($0)')" } ?? ""
            lines.append(String(repeating: "  ", count: depth) + "\(graph.nodes[index].displayName)\(why): " + Self.verdict(reasons[index]))
            for (edge, need) in graph.dependencies[index].enumerated().reversed() where !seen.contains(need) {
                stack.append((need, depth + 1, graph.inferredNeed(ofNode: index, edge: edge)?.path))
            }
        }
        return lines
    }

    /// `up-to-date`, `runs because input 'a.txt' changed`, `may run: it needs 'gen', which will run`.
    static func verdict(_ reason: RunReason) -> String {
        if case .unresolvable = reason { return reason.description }
        return switch reason.decision {
        case .upToDate, .mayRun, .skipped, .restored: reason.description
        case .runs: "runs because \(reason)"
        }
    }
}
