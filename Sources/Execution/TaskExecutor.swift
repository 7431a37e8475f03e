import TaskGraph

/// Starts the work of tasks, and owns the life of a run on it; the local shell executor is one, the Slurm
/// executor another.
///
/// The `Runner` calls `prepare()` once before the run's first task starts, `start` for each attempt,
/// `cancel()` when a signal stops the run, and `finish()` once the last task has ended. Only the executor
/// knows what each needs (an allocation, a queue of batch jobs, nothing at all): the caller makes it and
/// hands it to the Runner.
///
/// `start` and `cancel` must be safe to call from any thread and must never block: they are called on the
/// thread that starts tasks or stops the run (the event loop's, for a signal). `prepare` and `finish` may
/// block; the Runner calls them on a worker thread.
public protocol TaskExecutor: TaskDescribing {
    /// Sets the run up on the executor before its first task starts (Slurm: the run's allocation and its
    /// worker steps); it may wait, for as long as a cluster takes to grant what it asks for.
    /// - Returns: lines telling the user where the run goes, in the order they were said.
    /// - Throws: when the run cannot go to this executor; the Runner then starts no task.
    func prepare() throws -> [String]

    /// Begins one attempt.
    /// - Returns: a handle to stop the work early.
    /// - Throws: only when the work could not begin at all (then the reporter is not called).
    func start(_ work: TaskWork, reporter: TaskReporter) throws -> any TaskExecution

    /// A signal asks the run to stop (Ctrl-C, SIGTERM), before the Runner stops the executing attempts.
    /// Must not block: work that may (Slurm's `scancel`) goes to the executor's own worker thread.
    func cancel()

    /// Releases what the run held, once its last task has ended (Slurm: the allocation, the jobs left).
    /// - Returns: lines for the summary: what was released or cancelled, and how.
    func finish() -> [String]

    /// Where the executor says what the run waits for on it (a pending allocation, queued jobs) and
    /// `nil` once it waits no more; the Runner sets it before `prepare()`. Safe from any thread.
    func reportWaiting(to report: @escaping @Sendable (String?) -> Void)

    /// Where the executor tells the user, as it happens, something it did during the run that changes what
    /// runs (Slurm: a killed run's job cancelled because its task was edited since); the Runner sets it
    /// before `prepare()`. Safe from any thread.
    func reportLines(to report: @escaping @Sendable ([String]) -> Void)
}

extension TaskExecutor {
    /// Nothing to set up.
    public func prepare() throws -> [String] { [] }
    /// Nothing beyond the attempts, which the Runner stops itself.
    public func cancel() {}
    /// Nothing to release.
    public func finish() -> [String] { [] }
    /// Never waits.
    public func reportWaiting(to report: @escaping @Sendable (String?) -> Void) {}
    /// Has nothing to say during the run.
    public func reportLines(to report: @escaping @Sendable ([String]) -> Void) {}
}

/// How an executor would run a pipeline's tasks, as the dry run (`run --dry-run`) shows it; it needs no
/// cluster and starts nothing.
public protocol TaskDescribing: Sendable {
    /// The name of the plan's column that `describe` fills (`slurm`), or `nil` when the executor adds none.
    var describedColumn: String? { get }

    /// Lines above the plan: where the run as a whole would go.
    func describeRun(of graph: TaskGraph) -> [String]

    /// How the task of graph node `index` would run, for the plan's column; `nil` when there is no column.
    func describe(node index: Int, of graph: TaskGraph) -> String?
}

extension TaskDescribing {
    public var describedColumn: String? { nil }
    public func describeRun(of graph: TaskGraph) -> [String] { [] }
    public func describe(node index: Int, of graph: TaskGraph) -> String? { nil }
}

/// A running attempt, as the Runner may steer it.
public protocol TaskExecution: Sendable {
    /// Asks the work to stop (SIGTERM to a process group), escalating to `kill()` after `grace` seconds.
    func terminate(grace: Double)
    /// Stops the work at once (SIGKILL to a process group).
    func kill()
    /// Pauses the work (Ctrl-Z: SIGTSTP to a process group).
    func pause()
    /// Continues paused work (SIGCONT).
    func resume()
}

/// Where an executor reports an attempt's output and end; safe from any thread.
public struct TaskReporter: Sendable {
    /// A whole line of output (without its newline), already written to the task's log.
    public var output: @Sendable (String) -> Void
    /// Bytes done and, when known, the total, for steps that move data.
    public var progress: @Sendable (Int64, Int64?) -> Void
    /// Called exactly once, after the last `output`.
    public var finished: @Sendable (TaskResult) -> Void
    /// The attempt's id on the executor's scheduler (Slurm: `1234`, `1234.5`, `1234_7`), before `finished`;
    /// local work never calls it. The events carry it as `slurm_job` (docs/events.md).
    public var executorJob: @Sendable (String) -> Void = { _ in }
    /// How the executor's scheduler ended the attempt (Slurm: `OUT_OF_MEMORY`, `COMPLETED`), after
    /// `executorJob` and before `finished`, when it knows. The events carry it as `slurm_state`.
    public var executorState: @Sendable (String) -> Void = { _ in }
    /// Stops the whole run as Ctrl-C does: an interactive task, which had the terminal's foreground, died
    /// of the Ctrl-C that jobgraph did not get (docs/pipeline.md, "Interactive tasks"). Call it before `finished`.
    public var interruptsRun: @Sendable () -> Void = {}

    public init(output: @escaping @Sendable (String) -> Void, progress: @escaping @Sendable (Int64, Int64?) -> Void = { _, _ in },
                finished: @escaping @Sendable (TaskResult) -> Void) {
        self.output = output
        self.progress = progress
        self.finished = finished
    }
}
