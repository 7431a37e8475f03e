import JobGraphBasics

/// Ready tasks, best first: a heap of task indices ordered by a precomputed rank (unique per task).
struct RankedHeap: Sendable {
    private struct Entry: Comparable, Sendable {
        var rank: Int32
        var task: Int32
        static func < (lhs: Entry, rhs: Entry) -> Bool { lhs.rank < rhs.rank }
    }

    /// Smaller ranks pop first.
    private let rank: [Int32]
    private var heap = BinaryHeap<Entry>()

    init(rank: [Int32]) {
        self.rank = rank
    }

    var first: Int? { heap.first.map { Int($0.task) } }

    mutating func push(_ index: Int) {
        heap.insert(Entry(rank: rank[index], task: Int32(index)))
    }

    mutating func pop() -> Int? { heap.popFirst().map { Int($0.task) } }

    /// Removes and returns every index, in no particular order.
    mutating func removeAll() -> [Int] { heap.removeAll().map { Int($0.task) } }

    /// Whether `a` would pop before `b`.
    func isBefore(_ a: Int, _ b: Int) -> Bool { rank[a] < rank[b] }
}
