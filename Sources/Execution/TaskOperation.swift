import Foundation

/// The Foundation `Operation` of one task that starts: made when the Plan first starts it (see
/// `LiveOperations`), started by the runner at once (see `OperationStarter`), executing while the task's
/// attempts run and finished when the task reaches a terminal state. Its `needs` are `addDependency` edges
/// to the operations of needs that started. No `OperationQueue` holds it: the `Plan` decides when it starts.
final class TaskOperation: AsyncTaskOperation, @unchecked Sendable {
    let index: Int
    private let begin: @Sendable (Int) -> Void

    /// - Parameters:
    ///   - name: the task's id.
    ///   - begin: what `start()` calls with `index`: the runner's start of the task's first attempt.
    init(index: Int, name: String, begin: @escaping @Sendable (Int) -> Void) {
        self.index = index
        self.begin = begin
        super.init()
        self.name = name
    }

    override func execute() {
        begin(index)
    }
}
