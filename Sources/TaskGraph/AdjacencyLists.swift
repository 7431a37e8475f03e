/// One list of node indices per node, all held in two flat arrays (compressed sparse rows).
///
/// A million-task graph has millions of edges; an array per node would cost an allocation and a
/// header each. `lists[i]` is node `i`'s list, a 0-based collection of node indices. An immutable
/// value, safe to share between threads.
public struct AdjacencyLists: RandomAccessCollection, Equatable, Sendable, ExpressibleByArrayLiteral {
    /// `targets[starts[i]..<starts[i + 1]]` is node `i`'s list; `starts` has one entry more than nodes.
    private let starts: [Int32]
    private let targets: [Int32]

    init(starts: [Int32], targets: [Int32]) {
        self.starts = starts
        self.targets = targets
    }

    /// Lists given as arrays, for tests and small graphs.
    public init(arrayLiteral lists: [Int]...) {
        self.init(lists)
    }

    /// Lists given as arrays.
    public init(_ lists: [[Int]]) {
        var starts: [Int32] = [0]
        starts.reserveCapacity(lists.count + 1)
        var targets: [Int32] = []
        for list in lists {
            targets.append(contentsOf: list.lazy.map { Int32($0) })
            starts.append(Int32(targets.count))
        }
        self.init(starts: starts, targets: targets)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { starts.count - 1 }

    public subscript(node: Int) -> NodeList {
        NodeList(targets: targets[Int(starts[node])..<Int(starts[node + 1])])
    }

    /// Every list's entries together: the number of edges.
    public var totalCount: Int { targets.count }

    /// Where node `node`'s list starts among all entries (for data kept per edge, in the same order).
    func firstEdge(of node: Int) -> Int { Int(starts[node]) }

    /// Whether every list holds only nodes before its own: then file order is already topological.
    var pointsOnlyBackward: Bool {
        for node in indices {
            for position in Int(starts[node])..<Int(starts[node + 1]) where Int(targets[position]) >= node { return false }
        }
        return true
    }

    /// The lists pointing the other way: for each node, the nodes whose lists hold it, ascending.
    func reversed() -> AdjacencyLists {
        var counts = [Int32](repeating: 0, count: count + 1)
        for target in targets { counts[Int(target) + 1] += 1 }
        for index in 1..<counts.count { counts[index] += counts[index - 1] }
        var next = counts
        var reversedTargets = [Int32](repeating: 0, count: targets.count)
        for node in indices {
            for position in Int(starts[node])..<Int(starts[node + 1]) {
                let target = Int(targets[position])
                reversedTargets[Int(next[target])] = Int32(node)
                next[target] += 1
            }
        }
        return AdjacencyLists(starts: counts, targets: reversedTargets)
    }
}

/// One node's list of node indices, 0-based.
public struct NodeList: RandomAccessCollection, Equatable, Sendable, ExpressibleByArrayLiteral, CustomStringConvertible {
    private let targets: ArraySlice<Int32>

    init(targets: ArraySlice<Int32>) {
        self.targets = targets
    }

    public init(arrayLiteral elements: Int...) {
        self.targets = ArraySlice(elements.map { Int32($0) })
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { targets.count }
    public subscript(position: Int) -> Int { Int(targets[targets.startIndex + position]) }

    public static func == (lhs: NodeList, rhs: NodeList) -> Bool { lhs.targets.elementsEqual(rhs.targets) }

    public var description: String { Array(self).description }
}

/// Builds `AdjacencyLists` one node at a time, in node order.
struct AdjacencyBuilder {
    private var starts: [Int32] = [0]
    private var targets: [Int32] = []

    init(nodeCapacity: Int, edgeCapacity: Int) {
        starts.reserveCapacity(nodeCapacity + 1)
        targets.reserveCapacity(edgeCapacity)
    }

    /// Adds an entry to the current node's list.
    mutating func append(_ target: Int) { targets.append(Int32(target)) }

    /// Ends the current node's list; the next entries belong to the next node.
    mutating func endNode() { starts.append(Int32(targets.count)) }

    /// Entries added so far.
    var edgeCount: Int { targets.count }

    func build() -> AdjacencyLists { AdjacencyLists(starts: starts, targets: targets) }
}
