import Foundation
import PipelineModel

/// The `Operation` of one task: added to its queue when the Plan says it is ready; its work is
/// whatever the executor does, and it finishes when the task reaches a terminal state.
final class TaskOperation: AsyncTaskOperation, @unchecked Sendable {
    let index: Int
    private let begin: @Sendable (Int) -> Void

    /// The run's queue this operation is added to (`QueueLayout` numbering).
    let queue: Int

    init(index: Int, queue: Int, name: String, priority: Priority, qos: PipelineModel.QualityOfService?,
         begin: @escaping @Sendable (Int) -> Void) {
        self.index = index
        self.queue = queue
        self.begin = begin
        super.init()
        self.name = name
        queuePriority = priority.queuePriority
        if let qos { qualityOfService = qos.foundationValue }
    }

    override func execute() {
        begin(index)
    }
}

extension Priority {
    /// The task's `priority` as Foundation's queue priority.
    var queuePriority: Operation.QueuePriority {
        switch self {
        case .veryLow: .veryLow
        case .low: .low
        case .normal: .normal
        case .high: .high
        case .veryHigh: .veryHigh
        }
    }
}

extension PipelineModel.QualityOfService {
    /// The contract's QoS as Foundation's.
    var foundationValue: Foundation.QualityOfService {
        switch self {
        case .userInteractive: .userInteractive
        case .userInitiated: .userInitiated
        case .utility: .utility
        case .background: .background
        case .default: .default
        }
    }
}
