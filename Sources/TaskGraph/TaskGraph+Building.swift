import JobGraphBasics
import PipelineModel

extension TaskGraph {
    /// Expands static fan-outs, turns `needs` into edges and checks that the needs form no cycle.
    ///
    /// A static `foreach: [a, b]` on task `make` becomes nodes `make[a]` and `make[b]` where `make` stands
    /// in the file, each with `make`'s needs; naming `make` in `needs` means all of its items. A dynamic
    /// `foreach: {from:}` task stays one node, marked, until its list is read at run time. Runs in time
    /// linear in tasks plus needs, without recursion.
    /// - Parameters:
    ///   - pipeline: a pipeline the loader accepted (it has already checked each `needs` name on its own).
    ///   - diagnostics: receives every problem that needs the whole graph, cycles above all.
    /// - Returns: the graph, or `nil` when any error was found.
    public static func build(_ pipeline: Pipeline, diagnostics: inout Diagnostics) -> TaskGraph? {
        var problems = Diagnostics()
        let expansion = Expansion(pipeline.tasks, diagnostics: &problems)
        let (dependencies, locations) = expansion.resolveNeeds(diagnostics: &problems)
        guard !problems.hasErrors else {
            diagnostics.append(contentsOf: problems)
            return nil
        }
        let dependents = dependents(of: dependencies)
        let order = kahnOrder(dependencies: dependencies, dependents: dependents)
        if order.count < expansion.nodes.count {
            var finder = CycleFinder(nodes: expansion.nodes, dependencies: dependencies, locations: locations)
            finder.reportCycles(excluding: order, diagnostics: &problems)
        }
        diagnostics.append(contentsOf: problems)
        guard !problems.hasErrors else { return nil }
        return TaskGraph(
            pipeline: pipeline, nodes: expansion.nodes, dependencies: dependencies, dependencyLocations: locations,
            dependents: dependents, topologicalOrder: order, names: expansion.names)
    }

    /// The reverse adjacency of `dependencies`; each list comes out ascending because nodes are visited in order.
    static func dependents(of dependencies: [[Int]]) -> [[Int]] {
        var dependents = [[Int]](repeating: [], count: dependencies.count)
        for (node, needed) in dependencies.enumerated() {
            for dependency in needed { dependents[dependency].append(node) }
        }
        return dependents
    }
}

/// The nodes of a pipeline in expanded file order, with the lookups that resolve `needs` names.
private struct Expansion {
    let tasks: [TaskSpec]
    private(set) var nodes: [TaskNode] = []
    private(set) var names: NodeNames
    /// For each entry of `tasks`, the nodes made from it (empty for a duplicate or an empty fan-out).
    private var nodesOfTask: [Range<Int>] = []

    /// Expands every task of `tasks`, in file order.
    init(_ tasks: [TaskSpec], diagnostics: inout Diagnostics) {
        self.tasks = tasks
        nodes.reserveCapacity(tasks.count)
        nodesOfTask.reserveCapacity(tasks.count)
        names = NodeNames(capacity: tasks.count)
        for taskIndex in tasks.indices { add(taskIndex, diagnostics: &diagnostics) }
    }

    private mutating func add(_ taskIndex: Int, diagnostics: inout Diagnostics) {
        // Fields are read through `tasks[taskIndex]`, since binding the whole spec would copy all of it.
        let id = tasks[taskIndex].id
        let start = nodes.count
        defer { nodesOfTask.append(start..<nodes.count) }
        guard !names.contains(id) else {
            diagnostics.error("duplicate task '\(id)'", at: tasks[taskIndex].location)
            return
        }
        switch tasks[taskIndex].foreach {
        case .items(let items)?:
            for (position, item) in items.enumerated() {
                let itemID = id.item(item.value)
                guard !names.contains(itemID) else {
                    diagnostics.error("duplicate item '\(item.value)' in foreach of task '\(id)'", at: item.location)
                    continue
                }
                names.add(itemID, nodes: nodes.count..<(nodes.count + 1))
                nodes.append(TaskNode(
                    id: itemID, index: nodes.count, specs: tasks, specIndex: taskIndex,
                    item: ForeachItem(value: item.value, index: position, location: item.location)))
            }
        case .file?:
            nodes.append(TaskNode(id: id, index: nodes.count, specs: tasks, specIndex: taskIndex, isDynamicFanOut: true))
        case nil:
            nodes.append(TaskNode(id: id, index: nodes.count, specs: tasks, specIndex: taskIndex))
        }
        names.add(id, nodes: start..<nodes.count)
    }

    /// Each node's edges, from its task's `needs` in order; an edge named twice (`needs: [make, make[a]]`)
    /// is kept once, at its first entry.
    func resolveNeeds(diagnostics: inout Diagnostics) -> (dependencies: [[Int]], locations: [[SourceLocation]]) {
        var dependencies = [[Int]](repeating: [], count: nodes.count)
        var locations = [[SourceLocation]](repeating: [], count: nodes.count)
        // lastAddedBy[d] == n means node n already has an edge to d: a constant-time duplicate check,
        // valid because each node's edges are all added before the next node's.
        var lastAddedBy = [Int](repeating: -1, count: nodes.count)
        // A task's needs, resolved once for all of its items; the buffer is reused from task to task.
        var resolved: [(targets: Range<Int>, location: SourceLocation)] = []
        for taskIndex in tasks.indices {
            resolved.removeAll(keepingCapacity: true)
            for need in tasks[taskIndex].needs {
                guard let targets = names.nodes(named: need.value) else {
                    // Only the item id of a dynamic fan-out gets here from a loaded file: it is unknown until run time.
                    let hint = Suggestion.hint(for: need.value.rawValue, in: TaskGraph.nameCandidates(in: nodes))
                    diagnostics.error(
                        "task '\(tasks[taskIndex].id)' needs unknown task '\(need.value)'\(hint)", at: need.location)
                    continue
                }
                resolved.append((targets, need.location))
            }
            for node in nodesOfTask[taskIndex] {
                for (targets, location) in resolved {
                    for target in targets where lastAddedBy[target] != node {
                        lastAddedBy[target] = node
                        dependencies[node].append(target)
                        locations[node].append(location)
                    }
                }
            }
        }
        return (dependencies, locations)
    }
}
