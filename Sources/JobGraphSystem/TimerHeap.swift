import JobGraphBasics

/// Identifies a timer scheduled on an `EventLoop`, for cancelling it.
public struct TimerID: Hashable, Sendable {
    let rawValue: UInt64
}

/// Timer deadlines (monotonic nanoseconds), earliest first.
///
/// Cancelled timers stay in the heap and are skipped when they come up, so cancelling costs no search.
typealias TimerHeap = BinaryHeap<TimerEntry>

struct TimerEntry: Comparable, Sendable {
    var deadline: UInt64
    var id: UInt64

    /// Earlier deadline first; equal deadlines in scheduling order.
    static func < (lhs: TimerEntry, rhs: TimerEntry) -> Bool {
        (lhs.deadline, lhs.id) < (rhs.deadline, rhs.id)
    }
}
