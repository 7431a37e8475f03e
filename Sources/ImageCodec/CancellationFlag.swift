import Synchronization

/// Set by one thread to ask a filter running on others to stop at its next band of rows; with a deadline,
/// the work also stops by itself once it passes.
///
/// Why the deadline is read by the work itself: a timer on a dispatch queue needs a free worker thread to
/// fire, and on a machine whose cores the filters already occupy it fired only after the work had ended
/// (a 1 ms timeout let a whole tilt-shift succeed on one core).
///
/// Safe from any thread.
public final class CancellationFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    private let deadline: ContinuousClock.Instant?

    /// A flag not yet set; `deadline`, if any, sets it when it passes.
    public init(deadline: ContinuousClock.Instant? = nil) {
        self.deadline = deadline
    }

    /// Asks the work to stop; it stops at the next band boundary, not in the middle of a row.
    public func cancel() {
        flag.store(true, ordering: .relaxed)
    }

    /// Whether `cancel()` was called or the deadline passed.
    public var isCancelled: Bool {
        flag.load(ordering: .relaxed) || isPastDeadline
    }

    /// Whether the deadline passed.
    public var isPastDeadline: Bool {
        deadline.map { ContinuousClock.now >= $0 } ?? false
    }
}
