import JobGraphBasics
import Dispatch
import Execution
import Foundation
import PipelineModel

/// An executor that runs no process: each attempt ends after a short delay with a scripted result,
/// and the executor records what ran, in what order, and how many ran at once.
public final class FakeExecutor: TaskExecutor {
    public struct Record: Sendable {
        public var started: [TaskID] = []
        public var maximumConcurrent = 0
        public var terminated: [TaskID] = []
        fileprivate var running = 0
    }

    private let record = Locked(Record())
    private let results: @Sendable (TaskWork) -> TaskResult
    private let delay: Double
    /// Tasks that never end on their own: they wait until terminated.
    private let hanging: Set<TaskID>

    public init(delay: Double = 0.005, hanging: Set<TaskID> = [], results: @escaping @Sendable (TaskWork) -> TaskResult = { _ in .succeeded }) {
        self.delay = delay
        self.hanging = hanging
        self.results = results
    }

    public var recorded: Record { record.withLock { $0 } }

    public func start(_ work: TaskWork, reporter: TaskReporter) throws -> any TaskExecution {
        record.withLock { record in
            record.started.append(work.id)
            record.running += 1
            record.maximumConcurrent = max(record.maximumConcurrent, record.running)
        }
        let execution = FakeExecution(id: work.id, reporter: reporter) { [self] terminated in
            self.record.withLock { record in
                record.running -= 1
                if terminated { record.terminated.append(work.id) }
            }
        }
        if !hanging.contains(work.id) {
            let result = results(work)
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) {
                reporter.output("ran \(work.id)")
                execution.end(result, terminated: false)
            }
        }
        return execution
    }
}

private final class FakeExecution: TaskExecution, Sendable {
    let id: TaskID
    let reporter: TaskReporter
    let onEnd: @Sendable (Bool) -> Void
    private let ended = Locked(false)

    init(id: TaskID, reporter: TaskReporter, onEnd: @escaping @Sendable (Bool) -> Void) {
        self.id = id
        self.reporter = reporter
        self.onEnd = onEnd
    }

    func end(_ result: TaskResult, terminated: Bool) {
        let first = ended.withLock { ended in
            defer { ended = true }
            return !ended
        }
        guard first else { return }
        onEnd(terminated)
        reporter.finished(result)
    }

    func terminate(grace: Double) { end(.failed(exitCode: nil, reason: "terminated by SIGTERM"), terminated: true) }
    func kill() { end(.failed(exitCode: nil, reason: "killed by SIGKILL"), terminated: true) }
    func pause() {}
    func resume() {}
}
