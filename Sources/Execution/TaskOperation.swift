import Foundation
import Synchronization

/// One task's life in a run, from the moment the `Plan` starts it to its end: the Foundation `Operation`
/// of the task, and the only owner of everything about its attempts.
///
/// The model is WWDC 2015's "Advanced NSOperations": one object carries the state machine, the attempts,
/// the running work, its cancellation and its end. Where a task stands in the graph (pending, waiting on
/// its conditions, ready, executing, and how it ended) is the `Plan`'s; this is where its attempts stand.
/// Foundation sees the truth: `isExecuting` and `isFinished` follow `phase` (announced with the key-value
/// notifications its contract asks for), and the task's `needs` are `addDependency` edges to the
/// operations of the needs that ran.
///
/// Made only when the Plan first starts the task, and let go once nothing needs it (see `RunBook`): an
/// operation of swift-corelibs-foundation carries two locks and a condition of its own, and with its
/// edges cost about 600 bytes, so operations made for every task before the run were a quarter of a
/// 100,000-task run's peak memory (massif, 20,000 tasks: 11.3 MB of 32.5 MB at the start of the run).
/// A task found up to date before the run, skipped or cancelled gets none.
///
/// `@unchecked Sendable`: every mutable property is read and written under the runner's lock
/// (`Runner.state`), with one hand-over: `answer` is set under that lock before the operation is queued to
/// start, and `start()` reads it on the starting thread; nothing writes it again until the attempt is
/// handed to the executor, under the lock. `phase` is atomic, for Foundation's getters on any thread.
final class TaskOperation: Operation, @unchecked Sendable {
    /// Where the task's attempts stand.
    enum Phase: UInt8 {
        /// Made by the Plan's start, not yet started.
        case ready
        /// An attempt started: its up-to-date check and its work are being prepared, before the executor has it.
        case starting
        /// The executor runs the attempt (`handle`).
        case executing
        /// The attempt failed and the next one waits out its `retry_delay`.
        case waitingToRetry
        /// The outcome is known and the task's completion hook runs; its dependents wait for it.
        case completing
        /// The task ended: the Plan has its terminal state.
        case finished
    }

    let index: Int
    let task: RunTask
    /// Why the executor could not be set up for the run: every attempt then fails with it.
    let setupFailure: String?
    private let begin: @Sendable (TaskOperation) -> Void
    private let storedPhase = Atomic<UInt8>(Phase.ready.rawValue)

    /// The latest attempt's number, 1 for the first.
    var attempt = 1
    var attemptStarted: ContinuousClock.Instant
    /// The number of the last attempt that ended: a handle that arrives after its attempt ended is dropped.
    var endedAttempt = 0
    /// The up-to-date check's answer once checked; let go once the task ended.
    var answer: UpToDateAnswer?
    /// How the task ends without running, decided at its start: `upToDate`, or `restored` from the output cache.
    var outcomeWithoutRunning: Plan.Outcome?
    /// The running attempt.
    var handle: (any TaskExecution)?
    /// Its retry waits for the Plan to give it what the next attempt holds (`Plan.retry(_:holding:)`).
    var waitsForRoom = false
    /// What the next attempt asked beyond a total, for its transition into `executing`.
    var resourcesNote: String?
    /// The executor's job of the latest attempt (a Slurm job or step), for its transitions.
    var executorJob: String?
    /// How the executor's scheduler ended the latest attempt (Slurm's `OUT_OF_MEMORY`), when it says.
    var executorState: String?
    /// An attempt was handed to the executor: the task's log is this run's (a task that failed before, on a
    /// template or a path, still has the log of an earlier run).
    var isHandedToExecutor = false
    /// How the last attempt ended, once no retry follows.
    var result: TaskResult?
    /// Stopped by an interrupt: it ends `cancelled`, not `failed`.
    var isTerminated = false
    /// Stopped while its handle had not arrived yet: terminated as soon as it does.
    var terminatesOnStart = false
    /// A service stopped because no remaining task needs it.
    var isStoppedService = false
    /// A service that did not become ready in time.
    var isNotReady = false
    /// Where its outputs were restored from, when the output cache had them: it ends `restored`.
    var restoredFrom: String?
    /// What to store in the output cache once it succeeds: it was looked up there and missed.
    var cacheEntry: CachedTask?

    /// - Parameters:
    ///   - answer: the answer the pass before the run gave, if it checked the task.
    ///   - begin: what `start()` calls: the runner's start of the first attempt.
    init(index: Int, task: RunTask, answer: UpToDateAnswer?, setupFailure: String?, startedAt: ContinuousClock.Instant,
         begin: @escaping @Sendable (TaskOperation) -> Void) {
        self.index = index
        self.task = task
        self.answer = answer
        self.setupFailure = setupFailure
        self.begin = begin
        attemptStarted = startedAt
        super.init()
        name = task.id.rawValue
    }

    var phase: Phase {
        get { Phase(rawValue: storedPhase.load(ordering: .acquiring)) ?? .finished }
        set {
            let old = phase
            let executingChanges = Self.isExecuting(old) != Self.isExecuting(newValue)
            let finishedChanges = (old == .finished) != (newValue == .finished)
            if finishedChanges { willChangeValue(forKey: "isFinished") }
            if executingChanges { willChangeValue(forKey: "isExecuting") }
            storedPhase.store(newValue.rawValue, ordering: .releasing)
            if executingChanges { didChangeValue(forKey: "isExecuting") }
            if finishedChanges { didChangeValue(forKey: "isFinished") }
        }
    }

    private static func isExecuting(_ phase: Phase) -> Bool { phase != .ready && phase != .finished }

    override var isAsynchronous: Bool { true }
    override var isExecuting: Bool { Self.isExecuting(phase) }
    override var isFinished: Bool { phase == .finished }

    /// Starts the task's first attempt; the Plan decided it may start (no queue does).
    override func start() {
        begin(self)
    }
}
