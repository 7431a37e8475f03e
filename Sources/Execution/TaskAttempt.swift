import PipelineModel

/// One execution of one task: what the run report draws as a bar in the timeline.
public struct TaskAttempt: Sendable, Equatable {
    public var task: TaskID
    /// 1 for the first attempt.
    public var attempt: Int
    public var queue: String
    /// The lane it ran in, 0-based: the lowest lane free when it started, so lanes never overlap.
    public var slot: Int
    /// Seconds since the run started.
    public var start: Double
    /// Seconds since the run started; `nil` when the run died before the attempt ended.
    public var end: Double?
    /// The state the attempt ended in (`failed` also for an attempt that is retried); `executing` when it
    /// never ended.
    public var outcome: TaskState
    public var exitCode: Int32?
    public var error: String?
    /// The last lines of the task's log, kept for a failure so a later run's log cannot replace them.
    public var logTail: [String]
    /// What it held (`TaskTransition.resources`), when the pipeline declares resources.
    public var resources: Resources?

    public init(task: TaskID, attempt: Int, queue: String, slot: Int, start: Double, end: Double? = nil,
                outcome: TaskState = .executing, exitCode: Int32? = nil, error: String? = nil, logTail: [String] = [],
                resources: Resources? = nil) {
        self.task = task
        self.attempt = attempt
        self.queue = queue
        self.slot = slot
        self.start = start
        self.end = end
        self.outcome = outcome
        self.exitCode = exitCode
        self.error = error
        self.logTail = logTail
        self.resources = resources
    }
}

/// Turns a run's transitions into its attempts: one begins on each transition into `executing` and ends on
/// the next transition out of it. A stay in `executing` that ends `up-to-date` was only a check, no
/// attempt: it is dropped (a no-op rerun of 10,000 tasks has no bars to draw). Pure: feed it transitions in
/// order.
public struct TaskAttemptLog: Sendable {
    /// Every attempt so far, in the order they started; those still open have no `end`. Read in place: a
    /// copy of 100,000 of them at the end of a run was its peak memory (heaptrack, 20,000 tasks: 5.1 MB).
    public var attempts: some Sequence<TaskAttempt> { recorded.lazy.compactMap { $0 } }
    /// `nil` where a check was dropped.
    private var recorded: [TaskAttempt?] = []
    private var open: [TaskID: Int] = [:]
    private var lanes: [Bool] = []
    private let ignored: Set<TaskID>

    /// - Parameters:
    ///   - ignored: tasks that execute no work of their own, which take no lane: a dynamic fan-out is
    ///     `executing` while its items run.
    ///   - expected: the attempts a run with no retry makes at most (its tasks), reserved at once: grown
    ///     by doubling, the log was a 100,000-task run's largest heap consumer, its old and new buffers held
    ///     together (heaptrack: 26.75 MB of 140.9 MB). A no-op rerun touches none of the reserved pages.
    public init(ignoring ignored: Set<TaskID> = [], expected: Int = 0) {
        self.ignored = ignored
        recorded.reserveCapacity(expected)
    }

    /// Opens or closes an attempt for `transition`; other transitions change nothing.
    public mutating func record(_ transition: TaskTransition) {
        guard ignored.isEmpty || !ignored.contains(transition.task) else { return }
        if transition.from == .executing, let index = open.removeValue(forKey: transition.task), var attempt = recorded[index] {
            lanes[attempt.slot] = false
            attempt.end = transition.elapsed
            attempt.outcome = transition.to
            attempt.exitCode = transition.exitCode
            attempt.error = transition.error
            recorded[index] = transition.to == .upToDate ? nil : attempt
        }
        if transition.to == .executing {
            let slot = lanes.firstIndex(of: false) ?? lanes.count
            if slot == lanes.count { lanes.append(true) } else { lanes[slot] = true }
            open[transition.task] = recorded.count
            recorded.append(TaskAttempt(task: transition.task, attempt: transition.attempt, queue: transition.queue,
                                        slot: slot, start: transition.elapsed, resources: transition.resources))
        }
    }

    /// Records the transitions among `events`, in order, as `record(_:)` would one by one, passing over
    /// each check that found its task up to date: recorded, it would open an attempt and drop it, leaving
    /// the log as it was. A no-op rerun's transitions are mostly such pairs, and each event cost the
    /// attempt recorder about 1,400 instructions (callgrind, checked no-op rerun of 10,000 tasks).
    public mutating func record(transitionsIn events: [RunEvent]) {
        var index = events.startIndex
        while index < events.endIndex {
            guard case .transition(let transition) = events[index] else {
                index += 1
                continue
            }
            if index + 1 < events.endIndex, case .transition(let next) = events[index + 1],
               Self.isCheckOnly(transition, then: next) {
                index += 2
                continue
            }
            record(transition)
            index += 1
        }
    }

    /// Whether `into` and `out`, recorded one after the other, leave the log as it was: a task entering
    /// `executing` and leaving it for `up-to-date`, a check and no attempt.
    public static func isCheckOnly(_ into: TaskTransition, then out: TaskTransition) -> Bool {
        into.to == .executing && out.from == .executing && out.to == .upToDate && out.task == into.task
    }

    /// Keeps `lines` with the last attempt of `task`, for a failure's log tail.
    public mutating func attachLogTail(_ lines: [String], to task: TaskID) {
        guard let index = recorded.lastIndex(where: { $0?.task == task }) else { return }
        recorded[index]?.logTail = lines
    }
}
