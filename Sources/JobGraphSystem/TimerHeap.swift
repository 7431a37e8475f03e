/// Identifies a timer scheduled on an `EventLoop`, for cancelling it.
public struct TimerID: Hashable, Sendable {
    let rawValue: UInt64
}

/// A binary min-heap of timer deadlines (monotonic nanoseconds): O(log n) insert and pop, O(1) peek.
///
/// Cancelled timers stay in the heap and are skipped when they come up, so cancelling costs no search.
struct TimerHeap {
    struct Entry {
        var deadline: UInt64
        var id: UInt64

        /// Earlier deadline first; equal deadlines in scheduling order.
        func precedes(_ other: Entry) -> Bool {
            (deadline, id) < (other.deadline, other.id)
        }
    }

    private var entries: [Entry] = []

    var first: Entry? { entries.first }
    var isEmpty: Bool { entries.isEmpty }

    mutating func insert(_ entry: Entry) {
        entries.append(entry)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].precedes(entries[parent]) else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    mutating func popFirst() -> Entry? {
        guard let top = entries.first else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < entries.count, entries[left].precedes(entries[smallest]) { smallest = left }
                if right < entries.count, entries[right].precedes(entries[smallest]) { smallest = right }
                if smallest == parent { break }
                entries.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return top
    }
}
