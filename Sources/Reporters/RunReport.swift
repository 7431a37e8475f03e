import Foundation
import Execution
import PipelineModel

/// What `jobgraph report` shows of one run, gathered from the run history: plain values, so the page
/// needs nothing of the state store.
public struct RunReport: Sendable {
    /// The pipeline file's name.
    public var pipeline: String
    /// The run's number in the history (`jobgraph history`).
    public var run: String
    public var startedAt: Date
    /// Seconds from start to end; `nil` for a run that never finished.
    public var wallTime: Double?
    /// `succeeded`, `failed`, `interrupted` …
    public var outcome: String
    /// The run's `--jobs`: the timeline has at least this many lanes. `nil` when the run's attempts were
    /// not recorded (killed outright, or recorded by a jobgraph that kept none).
    public var jobs: Int?
    /// How many tasks ended in each state, in the order shown.
    public var counts: [(state: String, count: Int)]
    /// Every attempt, in the order they started.
    public var attempts: [TaskAttempt]
    /// The chain of tasks that decided the run's length, first to last.
    public var criticalPath: [TaskID]
    /// How each task ended.
    public var finalStates: [TaskID: TaskState]
    /// The run's resource totals, `cpus` first, when its pipeline declared resources (and a jobgraph that
    /// keeps them ran it): only then does the page show resources.
    public var resources: [ResourceTotal]?

    public init(pipeline: String, run: String, startedAt: Date, wallTime: Double?, outcome: String, jobs: Int?,
                counts: [(state: String, count: Int)], attempts: [TaskAttempt], criticalPath: [TaskID],
                finalStates: [TaskID: TaskState], resources: [ResourceTotal]? = nil) {
        self.pipeline = pipeline
        self.run = run
        self.startedAt = startedAt
        self.wallTime = wallTime
        self.outcome = outcome
        self.jobs = jobs
        self.counts = counts
        self.attempts = attempts
        self.criticalPath = criticalPath
        self.finalStates = finalStates
        self.resources = resources
    }

    /// Lanes in the timeline: the run's `--jobs`, or more when attempts needed more (services run beside
    /// the jobs).
    public var laneCount: Int { max(jobs ?? 1, (attempts.map(\.slot).max() ?? -1) + 1, 1) }
}
