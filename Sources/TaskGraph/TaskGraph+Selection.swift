import JobGraphBasics
import PipelineModel

extension TaskGraph {
    /// The subgraph of the named tasks and everything they need, directly or not, as `run FILE TASK...` runs.
    ///
    /// The names also order the run (docs/cli.md, "run"), as just and go-task do: what a name brings in
    /// beyond the names before it waits for the last of those, so `run clean build` cleans before anything
    /// of `build` starts, while the needs each name brings in still run side by side. That wait is an edge
    /// of the subgraph, with no `needs` entry behind it (see `dependencyLocation`), so the Plan, the check
    /// before the run and every export see it as a need.
    ///
    /// Nodes keep their file order and are renumbered from 0; the subgraph keeps the whole `pipeline`.
    /// Linear in the nodes and edges of the graph.
    /// - Parameters:
    ///   - ids: each a task's id (all its items, for a fan-out) or one item's id such as `make[a]`; an
    ///     empty list selects nothing.
    ///   - diagnostics: receives an error, with no location, for each name that is no task.
    /// - Returns: the subgraph, or `nil` when some name is unknown.
    public func selecting(_ ids: [String], diagnostics: inout Diagnostics) -> TaskGraph? {
        var ranges: [Range<Int>] = []
        var isValid = true
        let aliases = aliasTable
        for name in ids {
            // An include's name stands for its goal, in order (docs/pipeline.md, "Includes").
            let goal = pipeline.includedGoals[name]?.map(\.rawValue) ?? [name]
            for name in goal {
                guard let range = indices(named: aliases[name]?.rawValue ?? name) else {
                    let hint = Suggestion.hint(for: name, in: Self.nameCandidates(in: nodes) + aliases.keys.sorted())
                    diagnostics.error("unknown task '\(name)'\(hint)", at: nil)
                    isValid = false
                    continue
                }
                if nodes[range.lowerBound].spec.isInternal {
                    diagnostics.error(internalMessage(name, nodes: range), at: nil)
                    isValid = false
                    continue
                }
                ranges.append(range)
            }
        }
        guard isValid else { return nil }
        // Per node, the position of the first name that brought it in; -1 while none has.
        var broughtBy = [Int](repeating: -1, count: nodes.count)
        // Per name, the nodes that wait for the name before it: those it brought in whose needs were all
        // brought in before (the roots of what it adds).
        var waiting: [[Int]] = Array(repeating: [], count: ranges.count)
        var toVisit: [Int] = []
        for (position, range) in ranges.enumerated() {
            var added: [Int] = []
            for node in range where broughtBy[node] < 0 {
                broughtBy[node] = position
                toVisit.append(node)
            }
            while let node = toVisit.popLast() {
                added.append(node)
                for dependency in dependencies[node] where broughtBy[dependency] < 0 {
                    broughtBy[dependency] = position
                    toVisit.append(dependency)
                }
            }
            if position > 0 {
                waiting[position] = added.filter { node in dependencies[node].allSatisfy { broughtBy[$0] < position } }
            }
        }
        // Each name's roots wait for the nodes of the nearest name before it that brought in anything.
        var orderAfter: [Int: [Int]] = [:]
        var previous: Range<Int>?
        for (position, range) in ranges.enumerated() {
            if let previous {
                for node in waiting[position] {
                    orderAfter[node, default: []].append(contentsOf: previous.filter { !dependencies[node].contains($0) && $0 != node })
                }
            }
            if range.contains(where: { broughtBy[$0] == position }) { previous = range }
        }
        return subgraph(keeping: broughtBy.map { $0 >= 0 }, orderAfter: orderAfter)
    }

    /// What a `run` that names no task runs: the pipeline's `default:` in its order, or else every task
    /// that is not `manual` with what it needs (docs/pipeline.md, "Top level").
    public func defaultSelection(diagnostics: inout Diagnostics) -> TaskGraph? {
        if let names = pipeline.defaultTasks {
            return selecting(names.map(\.value.rawValue), diagnostics: &diagnostics)
        }
        guard pipeline.tasks.contains(where: { $0.isManual || $0.isInternal }) else { return self }
        var kept = nodes.map { !$0.spec.isManual && !$0.spec.isInternal }
        var toVisit = kept.indices.filter { kept[$0] }
        while let node = toVisit.popLast() {
            for dependency in dependencies[node] where !kept[dependency] {
                kept[dependency] = true
                toVisit.append(dependency)
            }
        }
        return subgraph(keeping: kept, orderAfter: [:])
    }

    /// Every alias (`aliases:`) with the id of its task; the loader has checked that none clashes.
    public var aliasTable: [String: TaskID] {
        var table: [String: TaskID] = [:]
        for task in pipeline.tasks {
            for alias in task.aliases { table[alias.value.rawValue] = task.id }
        }
        return table
    }

    /// The id a command-line name means: the task an alias names, else the name itself.
    public func resolvedName(_ name: String) -> String { aliasTable[name]?.rawValue ?? name }

    /// Why an internal task cannot be named, with the tasks that need it (docs/pipeline.md, "internal").
    private func internalMessage(_ name: String, nodes range: Range<Int>) -> String {
        var needers: [String] = []
        for node in range {
            for dependent in dependents[node] where !needers.contains(nodes[dependent].baseID.rawValue) {
                needers.append(nodes[dependent].baseID.rawValue)
            }
        }
        let who = needers.isEmpty ? "no task needs it" : "it is needed by \(Suggestion.list(needers))"
        return "task '\(name)' is internal: it runs only when a task that runs needs it, and cannot be named; \(who)"
    }

    /// The nodes marked in `kept`, which must include everything each of them needs.
    /// - Parameter orderAfter: per kept node, more nodes it waits for (command-line order), after its needs.
    private func subgraph(keeping kept: [Bool], orderAfter: [Int: [Int]]) -> TaskGraph {
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
            for dependency in orderAfter[node.index] ?? [] {
                keptDependencies.append(newIndex[dependency])
                keptEdgeNeeds.append(Self.commandLineOrder)
            }
            keptDependencies.endNode()
        }
        let selectedDependencies = keptDependencies.build()
        let keptDependents = selectedDependencies.reversed()
        return TaskGraph(
            pipeline: pipeline, nodes: keptNodes, dependencies: selectedDependencies, edgeNeeds: keptEdgeNeeds,
            dependents: keptDependents,
            topologicalOrder: Self.kahnOrder(dependencies: selectedDependencies, dependents: keptDependents), inferredNeeds: inferredNeeds)
    }
}
