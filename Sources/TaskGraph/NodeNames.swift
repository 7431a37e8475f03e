import PipelineModel

/// The names that pick out nodes, as `needs` entries and selections use them: a task's id stands for
/// all of its nodes, an item's id (`make[a]`) for that one node.
///
/// Task ids and item ids cannot collide: task ids have no brackets, item ids always do. For a loaded
/// pipeline, task ids are looked up in the loader's own table (`TaskIndex`), so a million ids are
/// hashed once, not once per stage.
struct NodeNames: Sendable {
    /// Task id to position in the pipeline's `tasks`; `nil` when every name is in `nodesByName`.
    private let taskPositions: [String: Int]?
    /// With `taskPositions`: the nodes of task `t` are `taskNodeStarts[t]..<taskNodeStarts[t + 1]`.
    private var taskNodeStarts: [Int32] = [0]
    private var nodesByName: [TaskID: Range<Int>] = [:]

    /// An empty table; with `taskIndex`, tasks must be added in their order in the pipeline.
    init(capacity: Int, taskIndex: TaskIndex? = nil) {
        taskPositions = taskIndex?.positionByID
        if taskPositions != nil { taskNodeStarts.reserveCapacity(capacity + 1) } else { nodesByName.reserveCapacity(capacity) }
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

    func contains(_ name: TaskID) -> Bool { nodes(named: name) != nil }

    /// The nodes `name` stands for.
    func nodes(named name: TaskID) -> Range<Int>? {
        if let taskPositions, let position = taskPositions[name.rawValue] {
            return nodes(ofTaskAt: position)
        }
        return nodesByName[name]
    }

    /// The nodes of the task at `position` in the pipeline, once added; only with a `TaskIndex`.
    func nodes(ofTaskAt position: Int) -> Range<Int>? {
        guard position + 1 < taskNodeStarts.count else { return nil }
        return Int(taskNodeStarts[position])..<Int(taskNodeStarts[position + 1])
    }

    /// Names a task's nodes (with a `TaskIndex`, the next task in pipeline order).
    mutating func addTask(_ id: TaskID, nodes: Range<Int>) {
        if taskPositions != nil {
            taskNodeStarts.append(Int32(nodes.upperBound))
        } else {
            nodesByName[id] = nodes
        }
    }

    /// Names a single item's node.
    mutating func addItem(_ id: TaskID, node: Int) { nodesByName[id] = node..<(node + 1) }
}
