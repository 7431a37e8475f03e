import Foundation
import PipelineModel
import TaskGraph

/// The graph compiled into Foundation's model: one `OperationQueue` per named queue (its name, limit and
/// QoS) and one `TaskOperation` per task, its `needs` as `addDependency` edges, its `priority` as
/// `queuePriority`.
///
/// The queues describe the run as the contract does; the operations are started directly when the `Plan`
/// says so (see `OperationStarter`), which enforces the same limits, so the queues never hold one.
///
/// A task found up to date before the run, with all its needs, gets no operation: it never executes, and
/// making 10,000 operations with their dependency edges was a third of a no-op rerun's own work (callgrind).
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

    /// One operation per task but those `endedBeforeRun`, with their `needs` as dependencies.
    /// - Parameter begin: what an operation calls when it starts, with its task's index.
    static func operations(graph: TaskGraph, tasks: [RunTask], endedBeforeRun: [Bool],
                           begin: @escaping @Sendable (Int) -> Void) -> [TaskOperation?] {
        let operations = tasks.indices.map { index in
            endedBeforeRun[index] ? nil : operation(index, for: tasks[index], begin: begin)
        }
        for (index, operation) in operations.enumerated() {
            guard let operation else { continue }
            // A service's dependents start once it is ready, while its operation still executes, so that
            // one kind of need is not an operation dependency (the Plan keeps the rule).
            for need in graph.dependencies[index] where graph.nodes[need].spec.service == nil {
                if let needed = operations[need] { operation.addDependency(needed) }
            }
        }
        return operations
    }

    /// The operation of one task, also of an item a dynamic fan-out adds while the run goes on.
    static func operation(_ index: Int, for task: RunTask, begin: @escaping @Sendable (Int) -> Void) -> TaskOperation {
        TaskOperation(index: index, queue: task.queue, name: task.id.rawValue, priority: task.spec.priority, qos: task.qos, begin: begin)
    }
}
