import JobGraphBasics

/// Ready tasks, best first: task indices ordered by rank (position in the scheduling order), then index.
struct RankedHeap: Sendable {
    private struct Entry: Comparable, Sendable {
        var rank: Int32
        var task: Int32
        static func < (lhs: Entry, rhs: Entry) -> Bool { (lhs.rank, lhs.task) < (rhs.rank, rhs.task) }
    }

    private var heap = BinaryHeap<Entry>()

    var first: Int? { heap.first.map { Int($0.task) } }
    var firstRank: (rank: Int32, task: Int)? { heap.first.map { ($0.rank, Int($0.task)) } }

    mutating func push(_ index: Int, rank: Int32) {
        heap.insert(Entry(rank: rank, task: Int32(index)))
    }

    mutating func pop() -> Int? { heap.popFirst().map { Int($0.task) } }

    /// Removes and returns every index, in no particular order.
    mutating func removeAll() -> [Int] { heap.removeAll().map { Int($0.task) } }
}
