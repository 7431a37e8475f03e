import Foundation
import PipelineModel
import TaskGraph

/// The graph compiled into Foundation's model: one `OperationQueue` per named queue (its name, limit and
/// QoS) and one `TaskOperation` per task that runs, its `needs` as `addDependency` edges (see
/// `LiveOperations`), its `priority` as `queuePriority`.
///
/// The queues describe the run as the contract does; the operations are started directly when the `Plan`
/// says so (see `OperationStarter`), which enforces the same limits, so the queues never hold one.
///
/// A task that never starts (found up to date before the run with all its needs, skipped, cancelled)
/// gets no operation: making 10,000 operations with their dependency edges was a third of a no-op
/// rerun's own work (callgrind).
enum CompiledOperations {
    /// One queue per named queue, in `QueueLayout` order.
    static func queues(_ layout: QueueLayout) -> [OperationQueue] {
        layout.names.indices.map { index in
            let queue = OperationQueue()
            queue.name = layout.names[index]
            queue.maxConcurrentOperationCount = layout.limits[index]
            if let qos = layout.qualities[index] { queue.qualityOfService = qos.foundationValue }
            return queue
        }
    }

    /// The operation of one task, made when it first starts; also of an item a dynamic fan-out added.
    static func operation(_ index: Int, for task: RunTask, begin: @escaping @Sendable (Int) -> Void) -> TaskOperation {
        TaskOperation(index: index, queue: task.queue, name: task.id.rawValue, priority: task.spec.priority, qos: task.qos, begin: begin)
    }
}
