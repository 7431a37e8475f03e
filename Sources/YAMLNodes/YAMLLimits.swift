/// Bounds that keep a hostile or broken file from costing unbounded time or memory.
public struct YAMLLimits: Sendable {
    /// Most nodes that aliases may bring in, counting every node of every aliased subtree.
    /// A "billion laughs" file passes this after a few levels and is refused at once.
    public var aliasExpansionNodes: Int
    /// Deepest nesting of lists and mappings; a pipeline needs fewer than ten levels.
    public var depth: Int

    public init(aliasExpansionNodes: Int = 1_000_000, depth: Int = 100) {
        self.aliasExpansionNodes = aliasExpansionNodes
        self.depth = depth
    }

    public static let standard = YAMLLimits()
}
