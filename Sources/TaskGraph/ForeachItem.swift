import JobGraphBasics

/// One item of a `foreach` known before the run (a list in the file, or a `from:` list read then), as
/// carried by the graph node it produced.
///
/// The graph only names the node (`make[a]`); substituting `{{ item }}` is the executor's work.
public struct ForeachItem: Hashable, Sendable {
    /// The item as written in the list.
    public var value: String
    /// The item's position in the list, 0-based.
    public var index: Int
    /// Where the item is written (for an item of a `from:` list, where `from` is).
    public var location: SourceLocation
    /// The fields of an item of a JSON list of objects (`{{ item.name }}`); `nil` for a string item.
    public var fields: [String: String]?

    /// Makes an item; `index` is 0-based.
    public init(value: String, index: Int, location: SourceLocation, fields: [String: String]? = nil) {
        self.value = value
        self.index = index
        self.location = location
        self.fields = fields
    }
}
