import PipelineModel
import TaskGraph

/// One task of a run as the runner tracks it: a graph node, or an item a dynamic fan-out added.
///
/// A class, and immutable: the runner hands a task around several times per transition, and as a struct
/// each copy retained and released every reference inside its `TaskSpec` (perf, 10,000-task layered run:
/// copying and destroying `RunTask` values was 2% of the runner's user time).
final class RunTask: Sendable {
    let id: TaskID
    /// Its entry in the pipeline's task list, not a copy: 100,000 copies held a run's peak 10 MB higher
    /// (heaptrack, clean run of `run-graphs.sh`'s 100,000-task layered graph).
    private let sharedSpec: SharedSpec
    var spec: TaskSpec {
        _read { yield sharedSpec.spec }
    }
    let item: ItemValue?
    /// `{{ index }}`: the item's 0-based position in its fan-out.
    let itemIndex: Int?
    let queue: Int
    let qos: QualityOfService?
    /// The graph node whose needs it has (for the critical path taken): itself, or a fan-out item's
    /// group. An index, not a copy of the list: 100,000 small arrays cost a run 6 MB.
    let needsOf: Int
    /// An item a dynamic fan-out added at run time.
    let isFanOutItem: Bool

    /// The conditions this task checks itself: a dynamic fan-out checks those that do not name
    /// `{{ item }}`, before reading its list; each of its items checks those that do.
    var ownConditions: [Condition] {
        if isFanOutItem { return spec.conditions.filter(\.usesItem) }
        if case .file? = spec.foreach, item == nil { return spec.conditions.filter { !$0.usesItem } }
        return spec.conditions
    }

    init(node: TaskNode, graph: TaskGraph, queue: Int) {
        id = node.id
        sharedSpec = node.sharedSpec
        item = node.item.map { item in item.fields.map(ItemValue.object) ?? .string(item.value) }
        itemIndex = node.item?.index
        self.queue = queue
        qos = graph.qualityOfService(ofNode: node.index)
        needsOf = node.index
        isFanOutItem = false
    }

    /// An item of the dynamic fan-out `group`; it waited for what the fan-out needed.
    init(item: ItemValue, number: Int, of group: RunTask) {
        id = TaskID(group.spec.id.rawValue).item(String(number))
        var spec = group.spec
        spec.foreach = nil
        sharedSpec = SharedSpec(spec)
        self.item = item
        itemIndex = number
        queue = group.queue
        qos = group.qos
        needsOf = group.needsOf
        isFanOutItem = true
    }
}
