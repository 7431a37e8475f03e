import JobGraphBasics
import PipelineModel

/// A vertex of the task graph: one task after static `foreach` expansion, known by its `TaskID`.
public struct TaskNode: Sendable {
    /// `make`, or `make[a]` for an item of a static fan-out.
    public var id: TaskID
    /// The node's position in expanded file order, 0-based; also its index in `TaskGraph.nodes`.
    public var index: Int
    /// The task as the file declares it; shared by all items of one fan-out.
    public var spec: TaskSpec
    /// The item this node stands for, for a static fan-out; `nil` otherwise.
    public var item: ForeachItem?
    /// True for a `foreach: {from:}` task, which stays one node until its list is read at run time.
    public var isDynamicFanOut: Bool

    /// Makes a node; the graph builder is the usual source of nodes.
    public init(id: TaskID, index: Int, spec: TaskSpec, item: ForeachItem? = nil, isDynamicFanOut: Bool = false) {
        self.id = id
        self.index = index
        self.spec = spec
        self.item = item
        self.isDynamicFanOut = isDynamicFanOut
    }

    /// The id written in the file: `make` for every item `make[…]`.
    public var baseID: TaskID { spec.id }

    /// How exports and plans show the node: its id, or `photo[*]` for a dynamic fan-out.
    public var displayName: String { isDynamicFanOut ? "\(id.rawValue)[*]" : id.rawValue }
}
