import JobGraphBasics
import PipelineModel

extension TaskGraph {
    /// The subgraph of the named tasks and everything they need, directly or not, as `run FILE TASK...` runs.
    ///
    /// Nodes keep their file order and are renumbered from 0; the subgraph keeps the whole `pipeline`.
    /// Linear in the nodes and edges of the graph.
    /// - Parameters:
    ///   - ids: each a task's id (all its items, for a fan-out) or one item's id such as `make[a]`; an
    ///     empty list selects nothing.
    ///   - diagnostics: receives an error, with no location, for each name that is no task.
    /// - Returns: the subgraph, or `nil` when some name is unknown.
    public func selecting(_ ids: [String], diagnostics: inout Diagnostics) -> TaskGraph? {
        var selected = [Bool](repeating: false, count: nodes.count)
        var toVisit: [Int] = []
        var allKnown = true
        for name in ids {
            guard let range = indices(named: name) else {
                let hint = Suggestion.hint(for: name, in: Self.nameCandidates(in: nodes))
                diagnostics.error("unknown task '\(name)'\(hint)", at: nil)
                allKnown = false
                continue
            }
            for node in range where !selected[node] {
                selected[node] = true
                toVisit.append(node)
            }
        }
        guard allKnown else { return nil }
        while let node = toVisit.popLast() {
            for dependency in dependencies[node] where !selected[dependency] {
                selected[dependency] = true
                toVisit.append(dependency)
            }
        }
        return subgraph(keeping: selected)
    }

    /// The nodes marked in `kept`, which must include everything each of them needs.
    private func subgraph(keeping kept: [Bool]) -> TaskGraph {
        var newIndex = [Int](repeating: -1, count: nodes.count)
        var keptNodes: [TaskNode] = []
        for node in nodes where kept[node.index] {
            newIndex[node.index] = keptNodes.count
            var renumbered = node
            renumbered.index = keptNodes.count
            keptNodes.append(renumbered)
        }
        var keptDependencies = AdjacencyBuilder(nodeCapacity: keptNodes.count, edgeCapacity: 0)
        var keptEdgeNeeds: [Int32] = []
        for node in nodes where kept[node.index] {
            let first = dependencies.firstEdge(of: node.index)
            for (edge, dependency) in dependencies[node.index].enumerated() {
                keptDependencies.append(newIndex[dependency])
                keptEdgeNeeds.append(edgeNeeds[first + edge])
            }
            keptDependencies.endNode()
        }
        let selectedDependencies = keptDependencies.build()
        let keptDependents = selectedDependencies.reversed()
        return TaskGraph(
            pipeline: pipeline, nodes: keptNodes, dependencies: selectedDependencies, edgeNeeds: keptEdgeNeeds,
            dependents: keptDependents,
            topologicalOrder: Self.kahnOrder(dependencies: selectedDependencies, dependents: keptDependents))
    }
}
