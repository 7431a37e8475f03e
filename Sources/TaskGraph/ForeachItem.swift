import JobGraphBasics

/// One item of a static `foreach: [a, b]` list, as carried by the graph node it produced.
///
/// The graph only names the node (`make[a]`); substituting `{{ item }}` is the executor's work.
public struct ForeachItem: Hashable, Sendable {
    /// The item as written in the list.
    public var value: String
    /// The item's position in the list, 0-based.
    public var index: Int
    /// Where the item is written.
    public var location: SourceLocation

    /// Makes an item; `index` is 0-based.
    public init(value: String, index: Int, location: SourceLocation) {
        self.value = value
        self.index = index
        self.location = location
    }
}
