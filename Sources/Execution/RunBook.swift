import Foundation
import PipelineModel

/// The run's mutable state, guarded by the runner's one lock.
struct RunBook {
    struct Execution {
        var attempt: Int
        var handle: any TaskExecution
    }

    var plan: Plan
    /// Graph nodes first, then the items dynamic fan-outs add, in the Plan's numbering.
    var tasks: [RunTask]
    /// The operations of the tasks started so far that something still needs.
    var operations: LiveOperations
    var attempts: [Int]
    var attemptStarted: [ContinuousClock.Instant?]
    var firstStarted: [Double?]
    var ended: [Double?]
    /// Seconds since the run started at which each service that became ready did: where it ends on the
    /// critical path, since what needs it starts then.
    var serviceReadyAt: [Int: Double] = [:]
    var endedAttempt: [Int]
    var results: [Int: TaskResult] = [:]
    /// Per task, its up-to-date check's answer once checked. An array: filled from the pass before the run
    /// at once, where a dictionary took 100,000 inserts (perf, no-op rerun of 100,000 tasks: 1.4%).
    var answers: [UpToDateAnswer?]

    /// The cause in task `index`'s answer, read in place: copying the answer copies its fingerprints, an
    /// existential (perf, checked rerun of 100,000 tasks: 10% of the run's events were that copy).
    func answerCause(_ index: Int) -> RunReason? {
        answers.withUnsafeBufferPointer { $0[index]?.cause }
    }
    /// Per graph node, what was known before the run of why it runs (see `Runner.reason`); empty when nothing was.
    var forecast: [RunReason] = []
    /// Tasks found up to date: they end without running.
    var upToDate: Set<Int> = []
    var executions: [Int: Execution] = [:]
    /// Tasks whose failed attempt waits out its `retry_delay`, with that attempt's number. Whoever removes the
    /// entry retries: the delay's timer, or a stop, which must not wait for the timer (contract: a pending
    /// retry is cancelled at once).
    var pendingRetries: [Int: Int] = [:]
    /// The executor's job of each task's latest attempt (a Slurm job or step), for its transitions.
    var executorJobs: [Int: String] = [:]
    /// How the executor's scheduler ended each task's latest attempt (Slurm's `OUT_OF_MEMORY`), when it says.
    var executorStates: [Int: String] = [:]
    /// Tasks with an attempt the executor took: only their logs are this run's (a task that failed before,
    /// on a template or a path, still has the log of an earlier run).
    var handedToExecutor: Set<Int> = []
    /// Why the executor could not be set up for the run: every attempt then fails with it.
    var executorSetupFailure: String?
    var failures: [Int: (exitCode: Int32?, reason: String)] = [:]
    var hookFailures: [RunSummary.FailedTask] = []
    /// Tasks stopped by an interrupt: their end is `cancelled`, not `failed`.
    var terminated: Set<Int> = []
    /// Executing tasks whose handle had not arrived when the run was stopped.
    var terminateOnStart: Set<Int> = []
    /// Services stopped because no remaining task needs them.
    var stoppedServices: Set<Int> = []
    /// Services that did not become ready in time.
    var notReady: Set<Int> = []
    var isSuspended = false
    var stop: RunStop?
    var stopRequests = 0
    var waiter: CheckedContinuation<Void, Never>?

    init(plan: Plan, tasks: [RunTask], operations: LiveOperations) {
        self.plan = plan
        self.tasks = tasks
        self.operations = operations
        let count = tasks.count
        attempts = Array(repeating: 0, count: count)
        attemptStarted = Array(repeating: nil, count: count)
        firstStarted = Array(repeating: nil, count: count)
        ended = Array(repeating: nil, count: count)
        endedAttempt = Array(repeating: 0, count: count)
        answers = Array(repeating: nil, count: count)
    }

    /// Makes room for one more task (a fan-out item).
    mutating func growBookkeeping() {
        operations.append()
        attempts.append(0)
        attemptStarted.append(nil)
        firstStarted.append(nil)
        ended.append(nil)
        endedAttempt.append(0)
        answers.append(nil)
    }
}

/// Holds a reference weakly, so closures made before an object exists can reach it later.
final class WeakBox<Value: AnyObject & Sendable>: @unchecked Sendable {
    // Written once in `Runner.init` before any operation can start, read afterwards: no lock needed.
    weak var value: Value?
}
