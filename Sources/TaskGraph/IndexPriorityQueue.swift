/// A set of integers in `0..<capacity` that hands out its smallest member first.
///
/// Kahn's algorithm needs "the ready node earliest in the file" at each step. Indices are dense, so a
/// bit per index works: each level above the bits has one bit per non-empty word of the level below,
/// and every operation touches one word per level (four levels reach 16 million indices). That keeps
/// the topological sort linear for any graph a pipeline file can describe, where a heap would add a log.
struct IndexPriorityQueue {
    /// `levels[0]` has one bit per index; the last level is a single word.
    private var levels: [[UInt64]]

    init(capacity: Int) {
        var levels: [[UInt64]] = []
        var count = max(capacity, 1)
        repeat {
            let words = (count + 63) / 64
            levels.append([UInt64](repeating: 0, count: words))
            count = words
        } while count > 1
        self.levels = levels
    }

    var isEmpty: Bool { levels[levels.count - 1][0] == 0 }

    /// Adds `index`, which must be in `0..<capacity`.
    mutating func insert(_ index: Int) {
        var position = index
        for level in levels.indices {
            let word = position >> 6
            let wasEmpty = levels[level][word] == 0
            levels[level][word] |= 1 << UInt64(position & 63)
            if !wasEmpty { return }
            position = word
        }
    }

    /// Removes and returns the smallest member, or `nil` when empty.
    mutating func popFirst() -> Int? {
        guard !isEmpty else { return nil }
        var position = 0
        for level in levels.indices.reversed() {
            position = position << 6 | levels[level][position].trailingZeroBitCount
        }
        var remaining = position
        for level in levels.indices {
            let word = remaining >> 6
            levels[level][word] &= ~(1 << UInt64(remaining & 63))
            if levels[level][word] != 0 { break }
            remaining = word
        }
        return position
    }
}
