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
        var expansion = Expansion()
        for spec in pipeline.tasks { expansion.add(spec, diagnostics: &problems) }
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
            dependents: dependents, topologicalOrder: order)
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
    var nodes: [TaskNode] = []
    private var indexByID: [TaskID: Int] = [:]
    private var indicesByBaseID: [TaskID: Range<Int>] = [:]

    mutating func add(_ spec: TaskSpec, diagnostics: inout Diagnostics) {
        guard indicesByBaseID[spec.id] == nil else {
            diagnostics.error("duplicate task '\(spec.id)'", at: spec.location)
            return
        }
        let start = nodes.count
        switch spec.foreach {
        case .items(let items)?:
            for (position, item) in items.enumerated() {
                let id = spec.id.item(item.value)
                guard indexByID[id] == nil else {
                    diagnostics.error("duplicate item '\(item.value)' in foreach of task '\(spec.id)'", at: item.location)
                    continue
                }
                append(TaskNode(
                    id: id, index: nodes.count, spec: spec,
                    item: ForeachItem(value: item.value, index: position, location: item.location)))
            }
        case .file?:
            append(TaskNode(id: spec.id, index: nodes.count, spec: spec, isDynamicFanOut: true))
        case nil:
            append(TaskNode(id: spec.id, index: nodes.count, spec: spec))
        }
        indicesByBaseID[spec.id] = start..<nodes.count
    }

    private mutating func append(_ node: TaskNode) {
        indexByID[node.id] = node.index
        nodes.append(node)
    }

    /// Each node's edges, from its task's `needs` in order; an edge named twice (`needs: [make, make[a]]`)
    /// is kept once, at its first entry.
    func resolveNeeds(diagnostics: inout Diagnostics) -> (dependencies: [[Int]], locations: [[SourceLocation]]) {
        var dependencies = [[Int]](repeating: [], count: nodes.count)
        var locations = [[SourceLocation]](repeating: [], count: nodes.count)
        // lastAddedBy[d] == n means node n already has an edge to d: a constant-time duplicate check.
        var lastAddedBy = [Int](repeating: -1, count: nodes.count)
        for node in nodes {
            for need in node.spec.needs {
                guard let targets = targets(of: need.value) else {
                    // Only the item id of a dynamic fan-out gets here from a loaded file: it is unknown until run time.
                    let hint = Suggestion.hint(for: need.value.rawValue, in: TaskGraph.nameCandidates(in: nodes))
                    diagnostics.error("task '\(node.baseID)' needs unknown task '\(need.value)'\(hint)", at: need.location)
                    continue
                }
                for target in targets where lastAddedBy[target] != node.index {
                    lastAddedBy[target] = node.index
                    dependencies[node.index].append(target)
                    locations[node.index].append(need.location)
                }
            }
        }
        return (dependencies, locations)
    }

    private func targets(of id: TaskID) -> Range<Int>? {
        if let range = indicesByBaseID[id] { return range }
        return indexByID[id].map { $0..<($0 + 1) }
    }
}
