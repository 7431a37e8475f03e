import Foundation
import JobGraphBasics
import PipelineModel

/// A run that repeats a verdict recorded earlier, "every selected task is up to date", without a graph,
/// a plan or operations: it sends the events a run whose pre-pass found every task up to date sends, in
/// the order that run sent them, and returns the same summary.
///
/// Why: a no-op rerun of 10,000 tasks spent its time loading the YAML, checking the tasks and writing
/// their history (0.24 s, against ninja's 0.031 s); the state store decides whether the verdict still
/// holds (`NoOpReplayRecord`), and this only tells the observers.
public struct NoOpReplay: Sendable {
    /// One task as the recorded run showed it.
    public struct Task: Sendable, Equatable {
        public var id: TaskID
        public var queue: String
        /// The reason its `ready -> executing` and `executing -> up-to-date` transitions carried.
        public var reason: String?

        public init(id: TaskID, queue: String, reason: String?) {
            self.id = id
            self.queue = queue
            self.reason = reason
        }
    }

    public var pipelineFile: String
    public var jobs: Int
    /// In the order the recorded run ended them.
    public var tasks: [Task]
    public var criticalPath: [TaskID]

    public init(pipelineFile: String, jobs: Int, tasks: [Task], criticalPath: [TaskID]) {
        self.pipelineFile = pipelineFile
        self.jobs = jobs
        self.tasks = tasks
        self.criticalPath = criticalPath
    }

    /// Hands the run's events to `deliver` in batches, in order, and returns the run's summary.
    ///
    /// Why batches handed over on this thread rather than an `EventChannel`: the replay makes its events
    /// faster than any observer takes them, so a channel held all of them at once (30,000 for 10,000
    /// tasks, 4 MB of fresh pages) and copied each twice; one reused batch of 1,024 does neither.
    public func run(deliver: ([RunEvent]) -> Void) -> RunSummary {
        let clock = ContinuousClock()
        let start = clock.now
        func elapsed() -> Double { (clock.now - start).inSeconds }
        let batchSize = 1024
        var batch: [RunEvent] = []
        batch.reserveCapacity(batchSize + 3)
        batch.append(.started(RunStart(pipelineFile: pipelineFile, taskCount: tasks.count, jobs: jobs, time: Date())))
        // One reading of the clocks per batch: the Runner sends a no-op rerun's transitions within a few
        // milliseconds too.
        var time = Date(), seconds = elapsed()
        for task in tasks {
            func transition(_ from: TaskState, _ to: TaskState, reason: String?, duration: Double?) -> RunEvent {
                var transition = TaskTransition(time: time, elapsed: seconds, task: task.id, from: from, to: to, attempt: 1,
                                                queue: task.queue, duration: duration)
                transition.reason = reason
                return .transition(transition)
            }
            batch.append(transition(.pending, .ready, reason: nil, duration: nil))
            batch.append(transition(.ready, .executing, reason: task.reason, duration: nil))
            batch.append(transition(.executing, .upToDate, reason: task.reason, duration: 0))
            if batch.count >= batchSize {
                deliver(batch)
                batch.removeAll(keepingCapacity: true)
                time = Date()
                seconds = elapsed()
            }
        }
        let counts: [TaskState: Int] = tasks.isEmpty ? [:] : [.upToDate: tasks.count]
        let summary = RunSummary(counts: counts, wallTime: elapsed(), criticalPath: criticalPath, failures: [], stop: nil)
        batch.append(.finished(summary))
        deliver(batch)
        return summary
    }
}
