extension TaskGraph {
    /// Kahn's algorithm; among ready nodes the smallest index (earliest in the file) goes first.
    /// Returns fewer than all nodes when some lie on or behind a cycle.
    static func kahnOrder(dependencies: AdjacencyLists, dependents: AdjacencyLists) -> [Int] {
        // When every task needs only tasks written before it (the usual file), smallest-index-first
        // takes them in file order; the heap cost 1,000 instructions a node (callgrind).
        if dependencies.pointsOnlyBackward { return Array(dependencies.indices) }
        var waitingFor = dependencies.map(\.count)
        var ready = IndexPriorityQueue(capacity: dependencies.count)
        for (node, count) in waitingFor.enumerated() where count == 0 { ready.insert(node) }
        var order: [Int] = []
        order.reserveCapacity(dependencies.count)
        while let node = ready.popFirst() {
            order.append(node)
            for dependent in dependents[node] {
                waitingFor[dependent] -= 1
                if waitingFor[dependent] == 0 { ready.insert(dependent) }
            }
        }
        return order
    }

    /// Each node's longest distance, in edges, from a node that needs nothing.
    static func levels(dependencies: AdjacencyLists, topologicalOrder: [Int]) -> [Int] {
        var levels = [Int](repeating: 0, count: dependencies.count)
        for node in topologicalOrder {
            for dependency in dependencies[node] { levels[node] = max(levels[node], levels[dependency] + 1) }
        }
        return levels
    }

    /// Each node's remaining critical path: its own duration plus the longest such path among the nodes
    /// that need it, so a node nothing needs has just its own duration.
    ///
    /// The scheduler ranks ready tasks of equal priority by this (contract: scheduling rules).
    /// - Parameter durations: seconds (or any unit) per node, indexed like `nodes`; a missing, negative
    ///   or non-finite entry counts as 0.
    /// - Returns: one length per node, in the unit of `durations`; linear in nodes plus edges.
    public func criticalPathLengths(durations: [Double]) -> [Double] {
        var lengths = [Double](repeating: 0, count: nodes.count)
        for node in topologicalOrder.reversed() {
            let own = node < durations.count && durations[node].isFinite ? max(durations[node], 0) : 0
            var longestAfter = 0.0
            for dependent in dependents[node] { longestAfter = max(longestAfter, lengths[dependent]) }
            lengths[node] = own + longestAfter
        }
        return lengths
    }

    /// Each node's remaining critical path counted in tasks, itself included: the ranking used when no
    /// run history gives durations.
    public func criticalPathLengths() -> [Double] {
        criticalPathLengths(durations: [Double](repeating: 1, count: nodes.count))
    }
}
