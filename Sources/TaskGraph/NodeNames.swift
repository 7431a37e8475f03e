import PipelineModel

/// The names that pick out nodes, as `needs` entries and selections use them: a task's id stands for
/// all of its nodes, an item's id (`make[a]`) for that one node.
///
/// One table serves both because they cannot collide: task ids have no brackets, item ids always do.
struct NodeNames: Sendable {
    private var nodesByName: [TaskID: Range<Int>] = [:]

    init(capacity: Int) {
        nodesByName.reserveCapacity(capacity)
    }

    /// The table of an existing list of nodes, whose fan-out items are adjacent.
    init(_ nodes: [TaskNode]) {
        self.init(capacity: nodes.count)
        for node in nodes {
            let previous = nodesByName[node.baseID]
            nodesByName[node.baseID] = (previous?.lowerBound ?? node.index)..<(node.index + 1)
            if node.id != node.baseID { nodesByName[node.id] = node.index..<(node.index + 1) }
        }
    }

    func contains(_ name: TaskID) -> Bool { nodesByName[name] != nil }

    /// The nodes `name` stands for.
    func nodes(named name: TaskID) -> Range<Int>? { nodesByName[name] }

    /// Names a task's nodes, or a single item's node.
    mutating func add(_ name: TaskID, nodes: Range<Int>) { nodesByName[name] = nodes }
}
