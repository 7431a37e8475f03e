import JobGraphBasics
import PipelineModel

/// A vertex of the task graph: one task after static `foreach` expansion, known by its `TaskID`.
public struct TaskNode: Sendable {
    /// `make`, or `make[a]` for an item of a static fan-out.
    public var id: TaskID
    /// The node's position in expanded file order, 0-based; also its index in `TaskGraph.nodes`.
    public var index: Int
    /// The item this node stands for, for a static fan-out; `nil` otherwise.
    public var item: ForeachItem? {
        get { itemBox?.item }
        set { itemBox = newValue.map(ItemBox.init) }
    }
    /// Boxed, so the common node without an item stays small.
    private var itemBox: ItemBox?
    /// True for a `foreach: {from:}` task, which stays one node until its list is read at run time.
    public var isDynamicFanOut: Bool
    /// The pipeline's task list and this node's entry in it. A `TaskSpec` is a few hundred bytes of
    /// fields; pointing into the shared list keeps a node small, so building and selecting 100,000 nodes
    /// copies no spec, and the items of a fan-out share their task.
    private let specs: [TaskSpec]
    let specIndex: Int

    /// Makes a node; the graph builder is the usual source of nodes.
    public init(id: TaskID, index: Int, spec: TaskSpec, item: ForeachItem? = nil, isDynamicFanOut: Bool = false) {
        self.init(id: id, index: index, specs: [spec], specIndex: 0, item: item, isDynamicFanOut: isDynamicFanOut)
    }

    init(id: TaskID, index: Int, specs: [TaskSpec], specIndex: Int, item: ForeachItem? = nil, isDynamicFanOut: Bool = false) {
        self.id = id
        self.index = index
        self.specs = specs
        self.specIndex = specIndex
        self.itemBox = item.map(ItemBox.init)
        self.isDynamicFanOut = isDynamicFanOut
    }

    /// The task as the file declares it; the same for all items of one fan-out.
    public var spec: TaskSpec { specs[specIndex] }

    /// The id written in the file: `make` for every item `make[…]`.
    public var baseID: TaskID { specs[specIndex].id }

    /// Reads one field of the spec without copying the rest (`spec` copies the whole value out).
    func specField<Field>(_ field: KeyPath<TaskSpec, Field>) -> Field { specs[specIndex][keyPath: field] }

    /// Whether its task has a per-item need (`map[{{ index }}]`), read without copying the spec.
    public var hasItemNeeds: Bool { !specField(\.itemNeeds).isEmpty }

    /// How exports and plans show the node: its id, or `photo[*]` for a dynamic fan-out.
    public var displayName: String { isDynamicFanOut ? "\(id.rawValue)[*]" : id.rawValue }
}

/// An immutable box for a node's `ForeachItem`.
private final class ItemBox: Sendable {
    let item: ForeachItem
    init(_ item: ForeachItem) { self.item = item }
}
