import Foundation
import PipelineModel

/// How a run ended: what every task came to, and what a user needs to see first.
public struct RunSummary: Sendable {
    public struct FailedTask: Sendable {
        public var id: TaskID
        public var exitCode: Int32?
        public var reason: String
        public var allowed: Bool
        public var logPath: String
        /// The last lines of the task's log.
        public var lastLines: [String]
    }

    public var counts: [TaskState: Int]
    /// Seconds from start to end.
    public var wallTime: Double
    /// The chain of tasks that decided the run's length: each started when the previous ended.
    public var criticalPath: [TaskID]
    public var failures: [FailedTask]
    /// Set when a signal stopped the run.
    public var stop: RunStop?
    /// Processes still running when the run ended, escaped from their task's process group (`setsid`, a
    /// double fork, a daemon), which were then stopped: one entry per task, in the order they were found.
    public var leftBehind: [LeftBehind] = []
    /// What the executor released or cancelled once the run ended (Slurm: the allocation, the jobs left),
    /// a line each, shown after the summary.
    public var executorNotes: [String] = []

    /// Processes a task left behind.
    public struct LeftBehind: Hashable, Sendable {
        /// The task that started them; `nil` when that could not be told.
        public var task: TaskID?
        public var processCount: Int

        public init(task: TaskID?, processCount: Int) {
            self.task = task
            self.processCount = processCount
        }
    }

    public init(counts: [TaskState: Int], wallTime: Double, criticalPath: [TaskID], failures: [FailedTask], stop: RunStop?) {
        self.counts = counts
        self.wallTime = wallTime
        self.criticalPath = criticalPath
        self.failures = failures
        self.stop = stop
    }

    /// Whether some task failed without `allow_failure`.
    public var hasFailures: Bool { failures.contains { !$0.allowed } }
}
