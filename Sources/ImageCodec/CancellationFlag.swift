import Synchronization

/// Set by one thread to ask a filter running on others to stop at its next band of rows.
///
/// Safe from any thread.
public final class CancellationFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    /// A flag not yet set.
    public init() {}

    /// Asks the work to stop; it stops at the next band boundary, not in the middle of a row.
    public func cancel() {
        flag.store(true, ordering: .relaxed)
    }

    /// Whether `cancel()` was called.
    public var isCancelled: Bool {
        flag.load(ordering: .relaxed)
    }
}
