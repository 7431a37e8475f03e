/// A binary min-heap of task indices ordered by a precomputed rank; O(log n) push and pop.
struct RankedHeap: Sendable {
    /// Smaller ranks pop first.
    private let rank: [Int64]
    private var items: [Int32] = []

    init(rank: [Int64]) {
        self.rank = rank
    }

    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }
    var first: Int? { items.first.map(Int.init) }

    mutating func push(_ index: Int) {
        items.append(Int32(index))
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard rank[Int(items[child])] < rank[Int(items[parent])] else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Int? {
        guard !items.isEmpty else { return nil }
        let top = items[0]
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < items.count, rank[Int(items[left])] < rank[Int(items[smallest])] { smallest = left }
                if right < items.count, rank[Int(items[right])] < rank[Int(items[smallest])] { smallest = right }
                if smallest == parent { break }
                items.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return Int(top)
    }

    /// Removes and returns every index, in no particular order.
    mutating func removeAll() -> [Int] {
        defer { items.removeAll() }
        return items.map(Int.init)
    }
}

extension RankedHeap {
    /// Whether `a` would pop before `b`.
    func isBefore(_ a: Int, _ b: Int) -> Bool { rank[a] < rank[b] }
}
