/// Starts the work of tasks; the local shell executor is one, a cluster executor could be another.
///
/// Implementations must be safe to call from any thread and must never block: `start` begins the work
/// and returns; the reporter hears of output and of the end.
public protocol TaskExecutor: Sendable {
    /// Begins one attempt.
    /// - Returns: a handle to stop the work early.
    /// - Throws: only when the work could not begin at all (then the reporter is not called).
    func start(_ work: TaskWork, reporter: TaskReporter) throws -> any TaskExecution
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
    /// The attempt's id on a cluster scheduler (Slurm: `1234`, `1234.5`, `1234_7`), before `finished`;
    /// local work never calls it.
    public var slurmJob: @Sendable (String) -> Void = { _ in }

    public init(output: @escaping @Sendable (String) -> Void, progress: @escaping @Sendable (Int64, Int64?) -> Void = { _, _ in },
                finished: @escaping @Sendable (TaskResult) -> Void) {
        self.output = output
        self.progress = progress
        self.finished = finished
    }
}
