import Foundation
import PipelineModel

/// What `jobgraph history FILE` shows: the latest runs, the slowest tasks and the flaky ones.
/// Encodes with snake_case keys for `--json`.
public struct HistoryReport: Sendable, Equatable, Codable {
    /// The pipeline file's name.
    public var pipeline: String
    /// Newest first.
    public var runs: [RunRecord]
    /// Slowest first.
    public var slowestTasks: [TaskTiming]
    /// Flakiest first.
    public var flakyTasks: [FlakyTask]

    public init(pipeline: String, runs: [RunRecord], slowestTasks: [TaskTiming], flakyTasks: [FlakyTask]) {
        self.pipeline = pipeline
        self.runs = runs
        self.slowestTasks = slowestTasks
        self.flakyTasks = flakyTasks
    }

    enum CodingKeys: String, CodingKey {
        case pipeline, runs
        case slowestTasks = "slowest_tasks"
        case flakyTasks = "flaky_tasks"
    }

    /// The report as pretty-printed JSON with sorted keys, ending in a newline.
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return try encoder.encode(self) + Data("\n".utf8)
    }
}

/// A task's typical duration: the median over its latest successful executions.
public struct TaskTiming: Sendable, Equatable, Codable {
    public var task: TaskID
    /// Seconds.
    public var medianDuration: Double
    /// Successful executions the median is taken over.
    public var samples: Int

    public init(task: TaskID, medianDuration: Double, samples: Int) {
        self.task = task
        self.medianDuration = medianDuration
        self.samples = samples
    }

    enum CodingKeys: String, CodingKey {
        case task
        case medianDuration = "median_duration"
        case samples
    }
}

/// A task that needed retries, or whose outcome changed between runs while its definition did not.
public struct FlakyTask: Sendable, Equatable, Codable {
    public var task: TaskID
    /// Recent runs in which the task executed to success or failure.
    public var runs: Int
    /// Of those, how many ended in failure.
    public var failures: Int
    /// Runs in which it needed more than one attempt.
    public var retriedRuns: Int
    /// Times its outcome flipped (succeeded to failed or back) from one execution to the next with the
    /// same definition fingerprint.
    public var outcomeChanges: Int

    public init(task: TaskID, runs: Int, failures: Int, retriedRuns: Int, outcomeChanges: Int) {
        self.task = task
        self.runs = runs
        self.failures = failures
        self.retriedRuns = retriedRuns
        self.outcomeChanges = outcomeChanges
    }

    enum CodingKeys: String, CodingKey {
        case task, runs, failures
        case retriedRuns = "retried_runs"
        case outcomeChanges = "outcome_changes"
    }
}
