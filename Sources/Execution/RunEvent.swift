import Foundation
import PipelineModel

/// Something that happened during a run, in the order it happened; observers receive these.
public enum RunEvent: Sendable {
    case started(RunStart)
    case transition(TaskTransition)
    /// A whole line a task printed.
    case output(task: TaskID, line: String)
    case progress(task: TaskID, bytes: Int64, total: Int64?)
    /// The queues were suspended (SIGUSR1) or resumed (SIGUSR2).
    case suspended(Bool)
    /// A signal asked the run to stop; `.interrupt` or `.terminate`.
    case stopping(RunStop)
    /// What the run waits for on its executor, in a sentence ("waiting for Slurm allocation 123: Resources"),
    /// or `nil` once it waits no more.
    case executorWaiting(String?)
    case finished(RunSummary)
}

/// What a run is about to do.
public struct RunStart: Sendable {
    public var pipelineFile: String
    public var taskCount: Int
    public var jobs: Int
    public var time: Date
    /// The totals the tasks' `resources` share, `cpus` (`--jobs`) first, each with where it comes from;
    /// `nil` when the pipeline declares no resources (docs/pipeline.md, "Resources").
    public var resources: [ResourceTotal]?

    public init(pipelineFile: String, taskCount: Int, jobs: Int, time: Date, resources: [ResourceTotal]? = nil) {
        self.pipelineFile = pipelineFile
        self.taskCount = taskCount
        self.jobs = jobs
        self.time = time
        self.resources = resources
    }
}

/// A run's total of one resource, and where it comes from.
public struct ResourceTotal: Sendable, Equatable {
    public var name: String
    /// Bytes for `mem`, a count otherwise.
    public var total: Int64
    /// `nil` when not known (a run recorded by a jobgraph that kept no source).
    public var source: TotalSource?

    public init(name: String, total: Int64, source: TotalSource?) {
        self.name = name
        self.total = total
        self.source = source
    }

    /// A run's totals: `cpus` (`--jobs`) first, then each of `totals`, with where each comes from.
    public static func list(jobs: Int, totals: Resources, sources: [String: TotalSource]) -> [ResourceTotal] {
        [ResourceTotal(name: Resources.cpus, total: Int64(jobs), source: .jobs)]
            + totals.amounts.filter { $0.name != Resources.cpus }.map { ResourceTotal(name: $0.name, total: $0.value, source: sources[$0.name]) }
    }
}

/// Why a run stops early.
public enum RunStop: String, Sendable {
    case interrupt
    case terminate
}

/// One task's change of state; encodes as the contract's event JSON.
public struct TaskTransition: Sendable, Codable, Equatable {
    public var time: Date
    /// Seconds since the run started.
    public var elapsed: Double
    public var task: TaskID
    public var from: TaskState
    public var to: TaskState
    /// 1 for the first attempt.
    public var attempt: Int
    public var queue: String
    public var exitCode: Int32?
    public var error: String?
    /// Seconds the attempt executed, on its terminal state.
    public var duration: Double?
    /// Why the task runs or is up to date, on a transition into `executing` or `up-to-date`.
    public var reason: String? = nil
    /// The executor's job that ran the attempt, when a cluster ran it: a Slurm job or step ("1234",
    /// "1234.5", "1234_7"). Encoded as `slurm_job`, the contract's name (docs/events.md).
    public var executorJob: String? = nil
    /// One of the three transitions (`ready`, `executing`, `up-to-date`) of a task found up to date before the
    /// run: plain progress leaves them out, as ninja says nothing of what it need not build. Not encoded: the
    /// events of such a task are those of any task.
    public var isUpToDateBeforeRun = false
    /// The output cache key of a `cache: true` task, on its terminal state once known (docs/cache.md).
    public var cacheKey: String? = nil
    /// How the executor's scheduler ended the attempt, on the transition out of `executing`, when it says:
    /// Slurm's job state (`COMPLETED`, `FAILED`, `OUT_OF_MEMORY`, `TIMEOUT`, `NODE_FAIL`, `PREEMPTED`,
    /// `CANCELLED`). Encoded as `slurm_state` (docs/events.md).
    public var executorState: String? = nil
    /// What the attempt holds, on a transition into `executing`, when the pipeline declares resources: `cpus`
    /// (the `--jobs` slots) first, then each limited resource it holds, in the order of the run's totals.
    /// Encoded as `resources`, `mem` in bytes (docs/events.md).
    public var resources: Resources? = nil
    /// On a retry's start, what its `retry_scale` asked beyond a total and what it holds instead (`asks mem
    /// 16G, more than the 12G total: holds 12G`). Encoded as `resources_note`.
    public var resourcesNote: String? = nil

    public init(time: Date, elapsed: Double, task: TaskID, from: TaskState, to: TaskState, attempt: Int, queue: String,
                exitCode: Int32? = nil, error: String? = nil, duration: Double? = nil) {
        self.time = time
        self.elapsed = elapsed
        self.task = task
        self.from = from
        self.to = to
        self.attempt = attempt
        self.queue = queue
        self.exitCode = exitCode
        self.error = error
        self.duration = duration
    }

    enum CodingKeys: String, CodingKey {
        case time, elapsed, task, from, to, attempt, queue
        case exitCode = "exit_code"
        case error, duration, reason
        case executorJob = "slurm_job"
        case cacheKey = "cache_key"
        case executorState = "slurm_state"
        // `resources` is left out: `JSONLinesReporter` writes it as an object (`Resources` is no `Codable`).
        case resourcesNote = "resources_note"
    }
}

extension TaskID: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
