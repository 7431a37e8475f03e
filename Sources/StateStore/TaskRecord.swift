import PipelineModel

/// How one task ended in one run: one row of the history, written when the task reaches a terminal state.
public struct TaskRecord: Sendable, Equatable, Codable {
    public var task: TaskID
    /// The terminal state; `executing` when read back from a run killed while the task ran.
    public var state: TaskState
    /// Attempts made; 0 for a task that never executed (up-to-date, skipped, cancelled while waiting).
    public var attempts: Int
    /// Seconds the last attempt executed; `nil` when it never executed.
    public var duration: Double?
    /// The last attempt's exit status, when a process exited with one.
    public var exitCode: Int32?
    /// `TaskDefinition.fingerprint` in this run, which tells a flaky task from one that was edited.
    public var definition: String?

    public init(task: TaskID, state: TaskState, attempts: Int, duration: Double? = nil, exitCode: Int32? = nil,
                definition: String? = nil) {
        self.task = task
        self.state = state
        self.attempts = attempts
        self.duration = duration
        self.exitCode = exitCode
        self.definition = definition
    }

    enum CodingKeys: String, CodingKey {
        case task, state, attempts, duration
        case exitCode = "exit_code"
        case definition
    }
}
