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

/// One task's change of state; `JSONLinesReporter` writes it as the contract's event JSON (docs/events.md).
public struct TaskTransition: Sendable, Equatable {
    public var time: Date
    /// Seconds since the run started.
    public var elapsed: Double
    public var task: TaskID
    public var from: TaskState
    public var to: TaskState
    /// One of the three transitions (`ready`, `executing`, `up-to-date`) of a task found up to date before the
    /// run: plain progress leaves them out, as ninja says nothing of what it need not build. Not written to
    /// the events: the events of such a task are those of any task.
    public var isUpToDateBeforeRun = false
    /// 1 for the first attempt.
    public var attempt: Int
    public var queue: String
    /// Seconds the attempt executed, on its terminal state.
    public var duration: Double?
    /// Why the task runs or is up to date, on a transition into `executing` or `up-to-date`.
    public var reason: String? = nil
    /// The fields most transitions leave out, in one shared box (`nil` while all are `nil`): a no-op rerun
    /// of 100,000 tasks holds its 300,000 transitions at once, and with these inline each took 224 bytes,
    /// 67 MB in all (heaptrack of `noop-rerun.sh`'s 100,000-task graph); now each takes 104.
    private var rare: RareTransitionFields?

    public var exitCode: Int32? {
        get { rare?.values.exitCode }
        set { updateRare { $0.exitCode = newValue } }
    }
    public var error: String? {
        get { rare?.values.error }
        set { updateRare { $0.error = newValue } }
    }
    /// The executor's job that ran the attempt, when a cluster ran it: a Slurm job or step ("1234",
    /// "1234.5", "1234_7"). Written as `slurm_job`, the contract's name (docs/events.md).
    public var executorJob: String? {
        get { rare?.values.executorJob }
        set { updateRare { $0.executorJob = newValue } }
    }
    /// The output cache key of a `cache: true` task, on its terminal state once known (docs/cache.md).
    public var cacheKey: String? {
        get { rare?.values.cacheKey }
        set { updateRare { $0.cacheKey = newValue } }
    }
    /// How the executor's scheduler ended the attempt, on the transition out of `executing`, when it says:
    /// Slurm's job state (`COMPLETED`, `FAILED`, `OUT_OF_MEMORY`, `TIMEOUT`, `NODE_FAIL`, `PREEMPTED`,
    /// `CANCELLED`). Written as `slurm_state` (docs/events.md).
    public var executorState: String? {
        get { rare?.values.executorState }
        set { updateRare { $0.executorState = newValue } }
    }
    /// What the attempt holds, on a transition into `executing`, when the pipeline declares resources: `cpus`
    /// (the `--jobs` slots) first, then each limited resource it holds, in the order of the run's totals.
    /// Written as `resources`, `mem` in bytes (docs/events.md).
    public var resources: Resources? {
        get { rare?.values.resources }
        set { updateRare { $0.resources = newValue } }
    }
    /// On a retry's start, what its `retry_scale` asked beyond a total and what it holds instead (`asks mem
    /// 16G, more than the 12G total: holds 12G`). Written as `resources_note`.
    public var resourcesNote: String? {
        get { rare?.values.resourcesNote }
        set { updateRare { $0.resourcesNote = newValue } }
    }

    public init(time: Date, elapsed: Double, task: TaskID, from: TaskState, to: TaskState, attempt: Int, queue: String,
                exitCode: Int32? = nil, error: String? = nil, duration: Double? = nil) {
        self.time = time
        self.elapsed = elapsed
        self.task = task
        self.from = from
        self.to = to
        self.attempt = attempt
        self.queue = queue
        self.duration = duration
        if exitCode != nil || error != nil { rare = RareTransitionFields(.init(exitCode: exitCode, error: error)) }
    }

    /// Sets a rare field in a new box, which is dropped once every field is `nil` again.
    private mutating func updateRare(_ change: (inout RareTransitionFields.Values) -> Void) {
        var values = rare?.values ?? RareTransitionFields.Values()
        change(&values)
        rare = values == RareTransitionFields.Values() ? nil : RareTransitionFields(values)
    }
}

/// `TaskTransition`'s rarely set fields, shared between copies of a transition; compared by value.
private final class RareTransitionFields: Sendable, Equatable {
    struct Values: Sendable, Equatable {
        var exitCode: Int32?
        var error: String?
        var executorJob: String?
        var cacheKey: String?
        var executorState: String?
        var resources: Resources?
        var resourcesNote: String?
    }

    let values: Values

    init(_ values: Values) { self.values = values }

    static func == (lhs: RareTransitionFields, rhs: RareTransitionFields) -> Bool { lhs.values == rhs.values }
}
