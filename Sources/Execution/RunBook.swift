import Foundation
import PipelineModel
import TaskGraph

/// The run's mutable state, guarded by the runner's one lock: the `Plan`, the operations of the tasks that
/// started (each the only owner of its task's life, see `TaskOperation`), and what is run-wide.
struct RunBook {
    /// How a task that failed ended, for the summary.
    struct Failure {
        var exitCode: Int32?
        var reason: String
        /// Its log is this run's: an attempt was handed to the executor.
        var hasLog: Bool
    }

    var plan: Plan
    /// Graph nodes first, then the items dynamic fan-outs add, in the Plan's numbering.
    var tasks: [RunTask]
    /// Per task, its operation from the Plan's start until nothing needs it any more: its own end, and every
    /// dependent's operation made (holding it as a dependency) or that dependent ended without one. What
    /// stays alive is the frontier of the run, not the whole graph.
    private(set) var operations: [TaskOperation?]
    /// Per task, the dependents that may still take its operation as a dependency.
    private var awaitedBy: [Int32]
    private let dependencies: AdjacencyLists
    /// Per task, the answer of the pass before the run, until its operation takes it: one per task, or
    /// empty when no pass was made, so that `hasPreRunAnswers` is the one bounds check. An array: filled at
    /// once, where a dictionary took 100,000 inserts (perf, no-op rerun of 100,000 tasks: 1.4%). The pass's
    /// own array is taken, not copied, so that two arrays of 100,000 answers never coexist (heaptrack, clean
    /// run of 100,000 tasks: 7.2 MB at the peak).
    private(set) var preRunAnswers: [UpToDateAnswer?] = []
    private var hasPreRunAnswers: Bool { !preRunAnswers.isEmpty }
    /// Per graph node, what was known before the run of why it runs (see `Runner.reason`); empty when nothing was.
    var forecast: [RunReason] = []
    /// Per task, its output cache key once known (see `Runner+OutputCache`): its dependents' keys are made
    /// from it, after its operation may be gone.
    var cacheKeys: [Int: String] = [:]
    /// When each task started first and ended, for the critical path taken: the run's record, kept once
    /// the task's operation is let go.
    var firstStarted: [Double?]
    var ended: [Double?]
    /// Seconds since the run started at which each service that became ready did: where it ends on the
    /// critical path, since what needs it starts then.
    var serviceReadyAt: [Int: Double] = [:]
    var failures: [Int: Failure] = [:]
    /// Per fan-out read at run time (its graph node), the indices of the items it added.
    var listedItems: [Int: Range<Int>] = [:]
    /// Per task whose per-item need named no task once its list was read, why: it fails with this reason
    /// when it would start (see `Plan.markUnresolvedNeed`).
    var unresolvedNeeds: [Int: String] = [:]
    var hookFailures: [RunSummary.FailedTask] = []
    /// Why the executor could not be set up for the run: every attempt then fails with it.
    var executorSetupFailure: String?
    var isSuspended = false
    var stop: RunStop?
    var stopRequests = 0
    var waiter: CheckedContinuation<Void, Never>?

    /// - Parameter isService: whether a task is a service, whose dependents start while it executes, so
    ///   its operation is nobody's dependency (the Plan keeps that rule).
    init(plan: Plan, tasks: [RunTask], graph: TaskGraph, isService: (Int) -> Bool) {
        self.plan = plan
        self.tasks = tasks
        let count = tasks.count
        operations = Array(repeating: nil, count: count)
        dependencies = graph.dependencies
        var awaitedBy = [Int32](repeating: 0, count: count)
        for index in 0..<graph.nodes.count where !isService(index) {
            awaitedBy[index] = Int32(graph.dependents[index].count)
        }
        self.awaitedBy = awaitedBy
        firstStarted = Array(repeating: nil, count: count)
        ended = Array(repeating: nil, count: count)
    }

    /// Takes the answers of the pass before the run, one per task. Call before the run starts.
    mutating func takeAnswers(_ answers: [UpToDateAnswer?]) {
        precondition(answers.count == tasks.count, "the pass before the run answers for every task")
        preRunAnswers = answers
    }

    /// The cause in task `index`'s answer, read in place: copying the answer copies its fingerprints, an
    /// existential (perf, checked rerun of 100,000 tasks: 10% of the run's events were that copy).
    func answerCause(_ index: Int) -> RunReason? {
        if let operation = operations[index] { return operation.answer?.cause }
        return hasPreRunAnswers ? preRunAnswers.withUnsafeBufferPointer { $0[index]?.cause } : nil
    }

    /// The task's up-to-date answer while it is known: its operation's, else the pass before the run's.
    func answer(_ index: Int) -> UpToDateAnswer? {
        if let operation = operations[index] { return operation.answer }
        return hasPreRunAnswers ? preRunAnswers[index] : nil
    }

    /// Makes room for one more task (a fan-out item): it needs no operation, and none needs its own.
    mutating func append(_ task: RunTask) {
        tasks.append(task)
        operations.append(nil)
        awaitedBy.append(0)
        if hasPreRunAnswers { preRunAnswers.append(nil) }
        firstStarted.append(nil)
        ended.append(nil)
    }

    /// Keeps the operation of a task the Plan starts, with its ended needs' operations as dependencies.
    mutating func add(_ operation: TaskOperation) {
        let index = operation.index
        operations[index] = operation
        if hasPreRunAnswers { preRunAnswers[index] = nil }
        if index < dependencies.count {
            for need in dependencies[index] {
                if let needed = operations[need], awaitedBy[need] > 0 { operation.addDependency(needed) }
            }
        }
        noteTaken(needsOf: index)
    }

    /// A task ended: finishes its operation, if it had one, and lets go of what nothing needs any more.
    /// Call once per task.
    mutating func end(_ index: Int) {
        guard let operation = operations[index] else {
            // A dependent that ends without ever starting will take none of its needs' operations.
            noteTaken(needsOf: index)
            return
        }
        operation.phase = .finished
        // Foundation keeps a finished operation's dependencies: each would hold the operations of the tasks
        // before it, and through them the whole graph's (heaptrack, 20,000 tasks: 7.7 MB).
        for dependency in operation.dependencies { operation.removeDependency(dependency) }
        releaseIfUnneeded(index)
    }

    private mutating func noteTaken(needsOf index: Int) {
        guard index < dependencies.count else { return }
        for need in dependencies[index] where awaitedBy[need] > 0 {
            awaitedBy[need] -= 1
            releaseIfUnneeded(need)
        }
    }

    private mutating func releaseIfUnneeded(_ index: Int) {
        if awaitedBy[index] == 0, operations[index]?.phase == .finished { operations[index] = nil }
    }

    /// The running attempts, for a signal to reach.
    var handles: [any TaskExecution] {
        operations.compactMap { $0?.handle }
    }
}

/// Holds a reference weakly, so closures made before an object exists can reach it later.
final class WeakBox<Value: AnyObject & Sendable>: @unchecked Sendable {
    // Written once in `Runner.init` before any operation can start, read afterwards: no lock needed.
    weak var value: Value?
}
