import Foundation

/// One run as the history remembers it.
public struct RunRecord: Sendable, Equatable, Codable {
    public var id: RunID
    /// The pipeline file's name.
    public var pipeline: String
    /// Wall-clock time the run began.
    public var startedAt: Date
    /// `nil` for a run that never finished.
    public var endedAt: Date?
    /// `interrupted` for a run that was killed, `running` while its process still holds the lock.
    public var outcome: RunOutcome
    /// Tasks selected for the run.
    public var taskCount: Int
    /// How many tasks ended in each state.
    public var tasks: TaskStateCounts
    /// For a nested run (a task's `jobgraph run` on its own pipeline), the run whose task started it.
    public var nestedIn: RunID?

    public init(id: RunID, pipeline: String, startedAt: Date, endedAt: Date?, outcome: RunOutcome, taskCount: Int,
                tasks: TaskStateCounts, nestedIn: RunID? = nil) {
        self.nestedIn = nestedIn
        self.id = id
        self.pipeline = pipeline
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.outcome = outcome
        self.taskCount = taskCount
        self.tasks = tasks
    }

    /// Seconds from start to end; `nil` for a run that never finished.
    public var duration: Double? { endedAt.map { $0.timeIntervalSince(startedAt) } }

    enum CodingKeys: String, CodingKey {
        case id, pipeline
        case startedAt = "started_at"
        case endedAt = "ended_at"
        case duration, outcome
        case taskCount = "task_count"
        case tasks
        case nestedIn = "nested_in"
    }

    // Dates as ISO-8601 text whatever the encoder's date strategy, like the event stream's `time`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(RunID.self, forKey: .id)
        pipeline = try container.decode(String.self, forKey: .pipeline)
        startedAt = try Self.date(container.decode(String.self, forKey: .startedAt), key: .startedAt, in: container)
        endedAt = try container.decodeIfPresent(String.self, forKey: .endedAt).map { try Self.date($0, key: .endedAt, in: container) }
        outcome = try container.decode(RunOutcome.self, forKey: .outcome)
        taskCount = try container.decode(Int.self, forKey: .taskCount)
        tasks = try container.decode(TaskStateCounts.self, forKey: .tasks)
        nestedIn = try container.decodeIfPresent(RunID.self, forKey: .nestedIn)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(pipeline, forKey: .pipeline)
        try container.encode(startedAt.formatted(Self.dateStyle), forKey: .startedAt)
        try container.encodeIfPresent(endedAt?.formatted(Self.dateStyle), forKey: .endedAt)
        try container.encodeIfPresent(duration, forKey: .duration)
        try container.encode(outcome, forKey: .outcome)
        try container.encode(taskCount, forKey: .taskCount)
        try container.encode(tasks, forKey: .tasks)
        try container.encodeIfPresent(nestedIn, forKey: .nestedIn)
    }

    private static let dateStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    private static func date(_ text: String, key: CodingKeys, in container: KeyedDecodingContainer<CodingKeys>) throws -> Date {
        do {
            return try dateStyle.parse(text)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not an ISO-8601 date: '\(text)'")
        }
    }
}

/// How many of a run's tasks ended in each terminal state.
public struct TaskStateCounts: Sendable, Equatable, Codable {
    public var succeeded = 0
    public var failed = 0
    public var upToDate = 0
    /// Restored from the output cache.
    public var restored = 0
    public var skipped = 0
    public var cancelled = 0
    /// Selected but never recorded as ended: the run was killed before or while they ran.
    public var unfinished = 0

    public init(succeeded: Int = 0, failed: Int = 0, upToDate: Int = 0, skipped: Int = 0, cancelled: Int = 0, unfinished: Int = 0) {
        self.succeeded = succeeded
        self.failed = failed
        self.upToDate = upToDate
        self.skipped = skipped
        self.cancelled = cancelled
        self.unfinished = unfinished
    }

    enum CodingKeys: String, CodingKey {
        case succeeded, failed
        case upToDate = "up_to_date"
        case restored, skipped, cancelled, unfinished
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        succeeded = try container.decode(Int.self, forKey: .succeeded)
        failed = try container.decode(Int.self, forKey: .failed)
        upToDate = try container.decode(Int.self, forKey: .upToDate)
        restored = try container.decodeIfPresent(Int.self, forKey: .restored) ?? 0
        skipped = try container.decode(Int.self, forKey: .skipped)
        cancelled = try container.decode(Int.self, forKey: .cancelled)
        unfinished = try container.decode(Int.self, forKey: .unfinished)
    }

    /// `restored` only when some task was: a history without the output cache reads as it always did.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(succeeded, forKey: .succeeded)
        try container.encode(failed, forKey: .failed)
        try container.encode(upToDate, forKey: .upToDate)
        if restored > 0 { try container.encode(restored, forKey: .restored) }
        try container.encode(skipped, forKey: .skipped)
        try container.encode(cancelled, forKey: .cancelled)
        try container.encode(unfinished, forKey: .unfinished)
    }
}
