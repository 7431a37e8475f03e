import JobGraphBasics
import PipelineModel

/// The checked, acyclic graph of a pipeline's tasks after static `foreach` expansion.
///
/// Nodes are numbered in expanded file order; every adjacency list holds node indices. Edges point
/// both ways: `dependencies[i]` are the nodes node `i` needs, `dependents[i]` the nodes that need it.
/// Make one with `build(_:diagnostics:)`, which refuses a pipeline whose needs form a cycle. An immutable
/// value, safe to share between threads.
public struct TaskGraph: Sendable {
    /// The pipeline the graph was built from; a selected subgraph keeps the whole pipeline.
    public let pipeline: Pipeline
    /// The nodes in expanded file order; `nodes[i].index == i`.
    public let nodes: [TaskNode]
    /// For each node, the indices of the nodes it needs, in the order its `needs` names them, without repeats.
    public let dependencies: AdjacencyLists
    /// For each node, the indices of the nodes that need it, ascending.
    public let dependents: AdjacencyLists
    /// Every node once, each after all it needs; among nodes free to go next, file order decides, so the
    /// order is the same on every run.
    public let topologicalOrder: [Int]
    /// For each node, the number of edges on the longest path from a node that needs nothing (which has level 0).
    public let levels: [Int]
    /// For each edge, in the order of `dependencies`, the position in its task's `needs` of the entry that made it,
    /// or `commandLineOrder`, or for an edge found from files the code of its entry in `inferredNeeds`
    /// (see `inferredCode`).
    let edgeNeeds: [Int32]
    /// Why each edge found from files exists (see `addingFileNeeds`).
    let inferredNeeds: [InferredNeed]
    /// The `edgeNeeds` of an edge that the order of the names on the command line made (see `selecting`).
    static let commandLineOrder: Int32 = -1

    let names: NodeNames
    /// The values of each task's params given on the command line, by task id (see `binding`).
    public internal(set) var parameterValues: [TaskID: [String: String]] = [:]

    /// Assembles a graph whose ids are unique and whose `topologicalOrder` was computed from `dependencies`;
    /// `names` may pass the name table when the caller already has it.
    init(
        pipeline: Pipeline, nodes: [TaskNode], dependencies: AdjacencyLists, edgeNeeds: [Int32],
        dependents: AdjacencyLists, topologicalOrder: [Int], names: NodeNames? = nil, inferredNeeds: [InferredNeed] = []
    ) {
        self.inferredNeeds = inferredNeeds
        self.pipeline = pipeline
        self.nodes = nodes
        self.dependencies = dependencies
        self.edgeNeeds = edgeNeeds
        self.dependents = dependents
        self.topologicalOrder = topologicalOrder
        self.levels = Self.levels(dependencies: dependencies, topologicalOrder: topologicalOrder)
        self.names = names ?? NodeNames(nodes)
    }

    /// For each edge `dependencies[i][k]`, where the `needs` entry that made it is written. Built on
    /// each call; `dependencyLocation(ofNode:edge:)` finds one.
    public var dependencyLocations: [[SourceLocation]] {
        nodes.indices.map { node in dependencies[node].indices.map { dependencyLocation(ofNode: node, edge: $0) } }
    }

    /// Where the `needs` entry behind edge `dependencies[node][edge]` is written; for an edge found from
    /// files, where the input is declared; for an edge of the command line's order, which no entry wrote,
    /// where the waiting task is declared.
    public func dependencyLocation(ofNode node: Int, edge: Int) -> SourceLocation {
        Self.dependencyLocation(nodes: nodes, dependencies: dependencies, edgeNeeds: edgeNeeds, inferredNeeds: inferredNeeds, node: node, edge: edge)
    }

    static func dependencyLocation(
        nodes: [TaskNode], dependencies: AdjacencyLists, edgeNeeds: [Int32], inferredNeeds: [InferredNeed], node: Int, edge: Int
    ) -> SourceLocation {
        let code = edgeNeeds[dependencies.firstEdge(of: node) + edge]
        if let inferred = inferredNeed(code: code, in: inferredNeeds) { return inferred.input }
        let need = Int(code)
        guard need >= 0 else { return nodes[node].spec.location }
        return nodes[node].spec.needs[need].location
    }

    /// The index of the node with this id (`make[a]`, `photo`), in constant time.
    public func index(of id: TaskID) -> Int? {
        // A fan-out's id names its items, not a node of its own, so the node found must carry the id.
        guard let range = names.nodes(named: id), range.count == 1, nodes[range.lowerBound].id == id else { return nil }
        return range.lowerBound
    }

    /// The nodes a user means by `name`: all items of the task the file calls `name`, or the one node
    /// whose id is `name` (an item such as `make[a]`); `nil` when nothing is called that.
    public func indices(named name: String) -> Range<Int>? { names.nodes(named: TaskID(name)) }

    /// The QoS a node's work runs with: the task's own `qos`, else its queue's, else `nil` (the default).
    public func qualityOfService(ofNode index: Int) -> QualityOfService? {
        guard nodes.indices.contains(index) else { return nil }
        let node = nodes[index]
        if let qos = node.spec.qos { return qos }
        guard let queue = node.spec.queue else { return nil }
        return pipeline.queue(named: queue.value)?.qos
    }

    /// Every name a user may select, in file order (so hints are the same on every run): each task's
    /// id, followed by its items' ids.
    static func nameCandidates(in nodes: [TaskNode]) -> [String] {
        var names: [String] = []
        var seen: Set<TaskID> = []
        for node in nodes {
            if seen.insert(node.baseID).inserted { names.append(node.baseID.rawValue) }
            if node.id != node.baseID { names.append(node.id.rawValue) }
        }
        return names
    }
}
