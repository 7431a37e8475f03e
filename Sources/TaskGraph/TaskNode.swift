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
    /// The node's entry in the pipeline's task list: pointing into the shared list keeps a node small, so
    /// building and selecting 100,000 nodes copies no spec, and the items of a fan-out share their task.
    public let sharedSpec: SharedSpec

    /// Makes a node; the graph builder is the usual source of nodes.
    public init(id: TaskID, index: Int, spec: TaskSpec, item: ForeachItem? = nil, isDynamicFanOut: Bool = false) {
        self.init(id: id, index: index, sharedSpec: SharedSpec(spec), item: item, isDynamicFanOut: isDynamicFanOut)
    }

    init(id: TaskID, index: Int, specs: [TaskSpec], specIndex: Int, item: ForeachItem? = nil, isDynamicFanOut: Bool = false) {
        self.init(id: id, index: index, sharedSpec: SharedSpec(specs: specs, index: specIndex), item: item,
                  isDynamicFanOut: isDynamicFanOut)
    }

    private init(id: TaskID, index: Int, sharedSpec: SharedSpec, item: ForeachItem?, isDynamicFanOut: Bool) {
        self.id = id
        self.index = index
        self.sharedSpec = sharedSpec
        self.itemBox = item.map(ItemBox.init)
        self.isDynamicFanOut = isDynamicFanOut
    }

    /// The task as the file declares it; the same for all items of one fan-out. Lent in place, as
    /// `SharedSpec.spec` is: reading one field copies that field only.
    public var spec: TaskSpec {
        _read { yield sharedSpec.spec }
    }

    /// The id written in the file: `make` for every item `make[…]`.
    public var baseID: TaskID { spec.id }

    /// Whether its task has a per-item need (`map[{{ index }}]`).
    public var hasItemNeeds: Bool { !spec.itemNeeds.isEmpty }

    /// How exports and plans show the node: its id, or `photo[*]` for a dynamic fan-out.
    public var displayName: String { isDynamicFanOut ? "\(id.rawValue)[*]" : id.rawValue }
}

/// A task's spec as an entry of a shared task list: 16 bytes, where a `TaskSpec` is over a hundred and
/// copying one retains each of its fields. `spec` lends the entry in place instead of copying it out.
public struct SharedSpec: Sendable {
    private let specs: [TaskSpec]
    private let index: Int

    init(specs: [TaskSpec], index: Int) {
        self.specs = specs
        self.index = index
    }

    /// A spec of its own (a dynamic fan-out's item, say), in a list of one.
    public init(_ spec: TaskSpec) { self.init(specs: [spec], index: 0) }

    public var spec: TaskSpec {
        _read { yield specs[index] }
    }
}

/// An immutable box for a node's `ForeachItem`.
private final class ItemBox: Sendable {
    let item: ForeachItem
    init(_ item: ForeachItem) { self.item = item }
}
