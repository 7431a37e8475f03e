import PipelineModel

/// What a run remembers between runs: whether a task's work is already done, and how each task ended.
///
/// The Runner calls it from operation threads, one task at a time per task; implementations (the
/// SQLite state store) must be safe from any thread. Failures to record are the implementation's to
/// report; they never fail a task.
public protocol TaskHistory: Sendable {
    /// Just before a task's first attempt: whether its outputs exist and nothing that defines it or that it
    /// reads changed since its last success. May read the task's input files.
    /// - Parameters:
    ///   - inputs, outputs: the task's `inputs` / `outputs` globs, rendered, relative to its folder.
    ///   - environmentNames: the variables the pipeline sets for it (not the caller's own environment).
    func check(_ work: TaskWork, inputs: [String], outputs: [String], environmentNames: [String]) -> UpToDateAnswer
    /// Whether `check` of a task with these paths reads the store or files, so that the Runner calls it on a
    /// worker, never on the event loop's thread. `false` lets the task start where its last need's exit was
    /// seen, without a hop to another thread.
    func checkReads(inputs: [String], outputs: [String]) -> Bool
    /// Checks for many tasks before the run that read the store once (see `UpToDatePrepass`); `nil` when
    /// the history has no such thing or cannot read its store now (each task is then checked as it starts).
    func makeBatchCheck() -> (any UpToDateBatchChecking)?
    /// The task is about to execute; `answer` is what `check` said of it, `nil` when it was not checked.
    /// May commit to the store before it returns (see `startCommits`).
    func started(_ task: TaskID, answer: UpToDateAnswer?)
    /// Whether `started` with `answer` commits to the store before it returns (the SQLite store withdraws a
    /// trusted success first), so that the Runner calls it on a worker, never on the event loop's thread.
    func startCommits(answer: UpToDateAnswer?) -> Bool
    /// The task reached a terminal state. Called under the runner's lock, in the order of the events, so
    /// it must only queue what it records (the SQLite store writes on a thread of its own). A task that the
    /// pass before the run found up to date is told as that pass finds it, before its events.
    func ended(_ task: TaskID, state: TaskState, attempts: Int, duration: Double?, exitCode: Int32?, answer: UpToDateAnswer?)
}

/// The answer of an up-to-date check, with what to store if the task then succeeds.
public struct UpToDateAnswer: Sendable {
    /// Why the task must run (`.inputChanged("a.c")`), or `.upToDate`.
    public var cause: RunReason
    /// The implementation's fingerprints, handed back in `ended`.
    public var fingerprints: (any Sendable)?

    public init(_ cause: RunReason, fingerprints: (any Sendable)? = nil) {
        self.cause = cause
        self.fingerprints = fingerprints
    }

    public var isUpToDate: Bool { cause.isUpToDate }
    /// Why the task must run ("input 'a.c' changed"), or why it need not, in the contract's words.
    public var reason: String { cause.description }
}

extension TaskHistory {
    public func makeBatchCheck() -> (any UpToDateBatchChecking)? { nil }
    /// Yes: a history that does not say otherwise may block in `check`.
    public func checkReads(inputs: [String], outputs: [String]) -> Bool { true }
    /// Yes: a history that does not say otherwise may block in `started`.
    public func startCommits(answer: UpToDateAnswer?) -> Bool { true }
}

/// `TaskHistory.check` for many tasks, before the run. Checks may run on several threads at once, each
/// through a lane of its own; `merge` then takes in what they learnt, once none is going on. Then
/// `finish()`.
public protocol UpToDateBatchChecking: AnyObject {
    /// `count` lanes, for as many threads checking at once.
    func makeLanes(_ count: Int) -> [any UpToDateBatchLane]
    /// Whether the store holds a success of `task` that a check could find current; without one the task
    /// runs whatever its check says, so the checks of the tasks that need it are not made before the run.
    func hasSuccess(of task: TaskID) -> Bool
    /// Takes in what the lanes' checks learnt (the paths they examined); call when no check is going on.
    func merge(_ lanes: [any UpToDateBatchLane])
    /// Keeps what the checks learnt (file content records).
    func finish()
}

/// One thread's checks in an `UpToDateBatchChecking`.
public protocol UpToDateBatchLane: AnyObject {
    /// As `TaskHistory.check`; from one thread at a time.
    func check(_ work: TaskWork, inputs: [String], outputs: [String], environmentNames: [String]) -> UpToDateAnswer
}
