import PipelineModel
import TaskGraph

/// One task of a run as the runner tracks it: a graph node, or an item a dynamic fan-out added.
struct RunTask: Sendable {
    var id: TaskID
    var spec: TaskSpec
    var item: ItemValue?
    var queue: Int
    var qos: QualityOfService?
    /// The graph node whose needs it has (for the critical path taken): itself, or a fan-out item's
    /// group. An index, not a copy of the list: 100,000 small arrays cost a run 6 MB.
    var needsOf: Int
    /// An item a dynamic fan-out added at run time.
    var isFanOutItem = false

    /// The conditions this task checks itself: a dynamic fan-out checks those that do not name
    /// `{{ item }}`, before reading its list; each of its items checks those that do.
    var ownConditions: [Condition] {
        if isFanOutItem { return spec.conditions.filter(\.usesItem) }
        if case .file? = spec.foreach { return spec.conditions.filter { !$0.usesItem } }
        return spec.conditions
    }

    init(node: TaskNode, graph: TaskGraph, queue: Int) {
        id = node.id
        spec = node.spec
        item = node.item.map { .string($0.value) }
        self.queue = queue
        qos = graph.qualityOfService(ofNode: node.index)
        needsOf = node.index
    }

    /// An item of the dynamic fan-out `group`; it waited for what the fan-out needed.
    init(item: ItemValue, number: Int, of group: RunTask) {
        id = TaskID(group.spec.id.rawValue).item(String(number))
        spec = group.spec
        spec.foreach = nil
        self.item = item
        queue = group.queue
        qos = group.qos
        needsOf = group.needsOf
    }
}
