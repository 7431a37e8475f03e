import Execution
import JobGraphBasics
import PipelineModel

/// Gathers from a run's events what a replay of it must send again (`NoOpReplay`): each task's queue and
/// reason, in the order the run ended them, and the summary's critical path. Anything but the transitions
/// of a run whose every task ended up to date makes the run one not to replay.
///
/// Called from the run's event stream (`RunObserver`); `capturedRun` is read after the stream ended. Its
/// state sits in a `Locked`, taken once per batch of events, so the two may be on different threads.
public final class NoOpReplayCapture: RunObserver, Sendable {
    private let gathered = Locked(Gathered())

    public init() {}

    public func observe(_ event: RunEvent) {
        gathered.withLock { $0.observe(event) }
    }

    public func observe(batch events: [RunEvent]) {
        gathered.withLock { gathered in for event in events { gathered.observe(event) } }
    }

    /// What the run sent, when it can be replayed as it was; `nil` otherwise.
    var capturedRun: (pipelineFile: String, tasks: [NoOpReplay.Task], criticalPath: [TaskID])? {
        gathered.withLock { $0.capturedRun }
    }
}

/// What `NoOpReplayCapture` has gathered so far.
private struct Gathered {
    private var tasks: [NoOpReplay.Task] = []
    private var pipelineFile = ""
    private var taskCount = 0
    private var criticalPath: [TaskID] = []
    private var isReplayable = true
    private var isFinished = false
    /// The task whose three transitions are under way, how many were seen, and its start's reason.
    private var current: (task: TaskID, seen: Int, reason: String?)?

    mutating func observe(_ event: RunEvent) {
        guard isReplayable else { return }
        switch event {
        case .started(let start):
            pipelineFile = start.pipelineFile
            taskCount = start.taskCount
        case .transition(let transition):
            note(transition)
        case .finished(let summary):
            isFinished = true
            criticalPath = summary.criticalPath
            if !summary.failures.isEmpty || summary.stop != nil || !summary.leftBehind.isEmpty
                || summary.counts[.upToDate] != taskCount || tasks.count != taskCount || taskCount == 0 || current != nil {
                isReplayable = false
            }
        case .output, .progress, .suspended, .stopping:
            isReplayable = false
        }
    }

    /// Keeps only the pattern `NoOpReplay` repeats, task after task: `pending -> ready`, `ready -> executing`,
    /// `executing -> up-to-date`, attempt 1, no exit code, error or Slurm job, the same reason on the last two.
    private mutating func note(_ transition: TaskTransition) {
        guard transition.attempt == 1, transition.exitCode == nil, transition.error == nil, transition.executorJob == nil else {
            isReplayable = false
            return
        }
        switch (transition.from, transition.to, current) {
        case (.pending, .ready, nil) where transition.reason == nil && transition.duration == nil:
            current = (transition.task, 1, nil)
        case (.ready, .executing, let task?) where task.seen == 1 && task.task == transition.task && transition.duration == nil:
            current = (transition.task, 2, transition.reason)
        case (.executing, .upToDate, let task?) where task.seen == 2 && task.task == transition.task
            && transition.duration == 0 && task.reason == transition.reason:
            tasks.append(NoOpReplay.Task(id: transition.task, queue: transition.queue, reason: transition.reason))
            current = nil
        default:
            isReplayable = false
        }
    }

    /// What the run sent, when it can be replayed as it was; `nil` otherwise.
    var capturedRun: (pipelineFile: String, tasks: [NoOpReplay.Task], criticalPath: [TaskID])? {
        isReplayable && isFinished ? (pipelineFile, tasks, criticalPath) : nil
    }
}
