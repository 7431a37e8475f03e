import Dispatch
import Foundation
import JobGraphBasics
import PipelineModel
import TaskGraph

/// Runs a checked task graph: the `Plan` decides what starts; each task that starts gets a `TaskOperation`,
/// the one owner of its life (its attempts, running work, cancellation and end); an executor does the work;
/// every transition goes to `events` in order.
///
/// What Foundation does in a run: a task's `TaskOperation` is a Foundation `Operation` whose executing and
/// finished state follow its phase (with the key-value notifications Foundation's contract asks for) and
/// whose `needs` are `addDependency` edges, so the operations tell the truth to any Foundation code that
/// inspects them. No `OperationQueue` is made: the `Plan` enforces `--jobs`, each queue's limit, priority
/// and exclusivity, and the runner starts each operation itself (`OperationStarter`). A queue would have
/// nothing left to decide, and handing an operation to a queue's thread cost two thread wake-ups per task;
/// corelibs' queue also slows down quadratically with operations that sit in it not yet ready (40,000
/// chained ones took 17.5 s to add).
///
/// The Advanced NSOperations ideas live here as first-class parts: conditions (checked while a task is
/// `waiting`), mutual exclusivity (in the `Plan`), observers (the event stream) and operations that
/// produce operations (a dynamic fan-out adds its items, with their operations, while the run goes on).
public final class Runner: Sendable {
    /// Every event of the run, in order; finishes after `.finished`. Drain it from one task.
    public let events = EventChannel<RunEvent>()
    let graph: TaskGraph
    let configuration: RunConfiguration
    let executor: any TaskExecutor
    let history: (any TaskHistory)?
    let resolver: Result<WorkResolver, TemplateError>
    let queueNames: [String]
    let state: Locked<RunBook>
    let clock = ContinuousClock()
    let startInstant: ContinuousClock.Instant
    let beginBox: WeakBox<Runner>
    let starter = OperationStarter()
    /// Where the up-to-date checks made as tasks start run (see `begin`), off the thread that starts them:
    /// serial queues, which dispatch runs on threads beside the pool of Swift's tasks. A concurrent queue
    /// takes that pool's threads (two on a 2-core machine) for as long as a large input takes to hash. One
    /// per `--jobs` slot, at most 8: no more tasks than slots start at once.
    let checks: [DispatchQueue]
    let expectedDurations: (@Sendable () -> [Double]?)?
    let executorMessages: @Sendable ([String]) -> Void
    /// `nil`: nothing is restored or stored (no cache, or `--no-cache`).
    let outputCache: (any OutputCaching)?
    /// The stores into the output cache going on; the run ends after them.
    let cacheStores = DispatchGroup()
    /// The run's limited resources, by name: what each attempt holds (`LimitedResources.holding`).
    let limitedResources: LimitedResources
    /// The pipeline declares resources: the events say what each attempt holds (docs/events.md).
    let showsResources: Bool

    /// - Parameters:
    ///   - history: up-to-date checks and the run's record; `nil` runs every task and remembers nothing.
    ///   - durations: expected seconds per graph node (from history), for the critical-path tie-break.
    ///   - expectedDurations: the same, asked for only once some task is known to run: reading them from the
    ///     history is the costliest part of a no-op rerun (a tenth of its instructions, 10,000 tasks).
    ///   - outputCache: restores `cache: true` tasks that are not up to date, and keeps what they make.
    ///   - executorMessages: where the executor's lines about its set-up go, as soon as it is set up
    ///     (Slurm: the allocation granted); what it released comes in the summary's `executorNotes`.
    public init(graph: TaskGraph, configuration: RunConfiguration, executor: any TaskExecutor,
                history: (any TaskHistory)? = nil, durations: [Double]? = nil,
                expectedDurations: (@Sendable () -> [Double]?)? = nil, outputCache: (any OutputCaching)? = nil,
                executorMessages: @escaping @Sendable ([String]) -> Void = { _ in }) {
        self.expectedDurations = expectedDurations
        self.executorMessages = executorMessages
        self.graph = graph
        self.configuration = configuration
        self.executor = executor
        self.history = history
        self.outputCache = outputCache
        checks = (0..<min(max(configuration.jobs, 1), 8)).map { DispatchQueue(label: "jobgraph checks \($0)") }
        resolver = Result { () throws(TemplateError) in try WorkResolver(graph: graph, configuration: configuration) }

        limitedResources = LimitedResources(totals: configuration.resources)
        showsResources = graph.pipeline.declaresResources
        let layout = QueueLayout(graph: graph, jobs: configuration.jobs, processorCount: configuration.processorCount)
        queueNames = layout.names
        let plan = Plan(graph: graph, layout: layout, jobs: configuration.jobs, keepGoing: configuration.keepGoing, durations: durations,
                        resources: configuration.resources)
        let tasks = graph.nodes.map { RunTask(node: $0, graph: graph, queue: layout.queueOfTask[$0.index]) }
        // The operations start their task through a weak reference: the runner owns them, not the reverse.
        let box = WeakBox<Runner>()
        beginBox = box
        state = Locked(RunBook(plan: plan, tasks: tasks, graph: graph, isService: { tasks[$0].spec.service != nil }))
        startInstant = clock.now
        beginBox.value = self
    }

    /// What a task's operation calls when it starts.
    static func beginning(through box: WeakBox<Runner>) -> @Sendable (TaskOperation) -> Void {
        { operation in box.value?.begin(operation) }
    }

    /// Runs every task to a terminal state and returns what happened: sets the executor up, runs the
    /// tasks on it, and releases it. Call once.
    public func run() async -> RunSummary {
        let totals = showsResources
            ? ResourceTotal.list(jobs: configuration.jobs, totals: configuration.resources, sources: configuration.resourceSources) : nil
        events.yield(.started(RunStart(pipelineFile: graph.pipeline.file, taskCount: graph.nodes.count,
                                             jobs: configuration.jobs, time: Date(), resources: totals)))
        // The executor sets up (a cluster may take a while to grant an allocation) while the pass before
        // the run finds what is up to date; no task starts before both are done.
        async let executorReady: Void = prepareExecutor()
        prepareTasks()
        await executorReady
        let step = state.withLock { book in
            let transitions = book.plan.begin()
            emit(transitions, in: &book)
            return nextStep(after: transitions, in: &book)
        }
        perform(step)
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let finished = state.withLock { book in
                if book.plan.isFinished { return true }
                book.waiter = waiter
                return false
            }
            if finished { waiter.resume() }
        }
        await runPipelineHook()
        await finishOutputCache()
        let executorNotes = await finishExecutor()
        var summary = makeSummary()
        summary.executorNotes = executorNotes
        events.yield(.finished(summary))
        events.finish()
        return summary
    }

    /// Leaves the run's bookkeeping for the process's exit to reclaim (`ExitReclaimed`), so that releasing
    /// the runner frees nothing. Call once the run is over, when the process ends after it.
    public func leaveBookkeepingToExit() {
        state.withLock { ExitReclaimed.park($0) }
    }

    /// Finds, before anything runs, the tasks that need not run (see `UpToDatePrepass`) and ranks the rest by
    /// their expected durations.
    func prepareTasks() {
        var prepass: UpToDatePrepass?
        let tasks = state.withLock { $0.tasks }
        if let history, !configuration.force, let resolver = try? resolver.get(), let batch = history.makeBatchCheck() {
            // Each task found up to date is recorded as the pass finds it, so that the history thread writes
            // its row while the pass goes on. Recorded when it ends, 100,000 rows kept the run waiting for
            // that thread 0.45 s after its last event (perf, no-op rerun of 100,000 tasks).
            prepass = UpToDatePrepass(graph: graph, tasks: tasks, resolver: resolver, batch: batch) { index, answer in
                history.ended(tasks[index].id, state: .upToDate, attempts: 0, duration: nil, exitCode: nil, answer: answer)
            }
        }
        let allUpToDate = prepass?.isUpToDate.allSatisfy { $0 } ?? false
        let criticalPaths = allUpToDate ? nil : expectedDurations?().map { graph.criticalPathLengths(durations: $0) }
        state.withLock { book in
            if let prepass {
                book.takeAnswers(prepass.answers)
                book.plan.markUpToDate(prepass.isUpToDate)
            }
            if let criticalPaths { book.plan.rank(byCriticalPaths: criticalPaths) }
            book.forecast = forecast(from: prepass, tasks: book.tasks)
        }
    }

    // MARK: - Steps decided under the lock, carried out outside it

    /// What to do after the Plan moved: start the operations of the newly startable tasks, do what the Plan
    /// asked, and wake `run()` at the end.
    struct Step {
        /// The operations of the tasks to start, in the Plan's order.
        var start: [TaskOperation] = []
        var requests = Plan.Requests()
        var stopServices: [any TaskExecution] = []
        /// Retries that waited for room and now hold it: their next attempt, begun under the lock.
        var retries: [(operation: TaskOperation, next: RetryStart)] = []
        var waiter: CheckedContinuation<Void, Never>?
    }

    /// - Parameter ended: a task that has just ended by running, whose operation finishes too.
    func nextStep(after transitions: [Plan.Transition], ended: Int? = nil, in book: inout RunBook) -> Step {
        var step = Step()
        // Every task that ended is recorded, also those that never ran (skipped, cancelled), or the history
        // would count them as unfinished; queued under the lock, with their events (see `complete`).
        // (The pass before the run recorded those it found up to date already: the ones the Plan marked.)
        for transition in transitions where transition.to.isTerminal {
            let index = transition.task
            if !(transition.to == .upToDate && book.plan.isUpToDateBeforeRun(index)) {
                history?.ended(book.tasks[index].id, state: transition.to, attempts: book.operations[index]?.attempt ?? 0,
                               duration: nil, exitCode: nil, answer: nil)
            }
            book.end(index)
        }
        if let ended { book.end(ended) }
        if !book.isSuspended {
            let taken = book.plan.take()
            emit(taken.transitions, in: &book)
            // The event goes out when the Plan starts the task, under the lock that ordered it after every
            // outcome recorded so far. Emitted later, as the operation starts, it could follow a failure
            // recorded in between, and the stream would show a task starting after a failure (contract:
            // "no new task starts after a failure") although the Plan had started it before.
            step.start.reserveCapacity(taken.started.count)
            let now = clock.now
            for index in taken.started {
                let operation = TaskOperation(index: index, task: book.tasks[index], answer: book.answer(index),
                                              setupFailure: book.executorSetupFailure, startedAt: now,
                                              begin: Self.beginning(through: beginBox))
                book.add(operation)
                operation.phase = .starting
                book.firstStarted[index] = (now - startInstant).inSeconds
                emit(index, from: .ready, to: .executing, in: &book)
                step.start.append(operation)
            }
        }
        step.requests = book.plan.takeRequests()
        for index in step.requests.retries {
            // After a stop, the stop's own call to `retry` ends it cancelled.
            guard let operation = book.operations[index], operation.waitsForRoom, book.stop == nil else { continue }
            operation.waitsForRoom = false
            step.retries.append((operation, beginRetry(operation, in: &book)))
        }
        for index in step.requests.stopServices {
            guard let operation = book.operations[index] else { continue }
            operation.isStoppedService = true
            if let handle = operation.handle { step.stopServices.append(handle) }
        }
        if book.plan.isFinished {
            step.waiter = book.waiter
            book.waiter = nil
        }
        return step
    }

    func perform(_ step: Step) {
        starter.start(step.start)
        for (operation, next) in step.retries { startRetry(operation, next) }
        for handle in step.stopServices { handle.terminate(grace: configuration.terminationGrace) }
        for index in step.requests.checkConditions { Task { await checkConditions(of: index) } }
        for index in step.requests.expand { DispatchQueue.global().async { [self] in expand(index) } }
        step.waiter?.resume()
    }

    // MARK: - Events

    func emit(_ transitions: [Plan.Transition], in book: inout RunBook) {
        // Queued together: the start of a no-op rerun sends 30,000 transitions at once, and taking the
        // channel's lock for each one cost more than making them (callgrind).
        var events: [RunEvent] = []
        events.reserveCapacity(transitions.count)
        // One reading of the clocks for the batch, whose transitions happen at one moment: two readings per
        // transition were 6% of the events a checked no-op rerun of 100,000 tasks sends at its start (perf).
        let moment = Moment(time: Date(), elapsed: elapsed())
        for transition in transitions {
            // A fan-out runs no operation of its own: its times come from the Plan's transitions.
            if book.plan.tasks[transition.task].isFanOut {
                if transition.to == .executing { book.firstStarted[transition.task] = moment.elapsed }
                if transition.to.isTerminal, book.ended[transition.task] == nil { book.ended[transition.task] = moment.elapsed }
            }
            // A per-item need that named no task fails its item without a run: the reason goes with the event.
            var error: String?
            if transition.to == .failed, !book.unresolvedNeeds.isEmpty, let reason = book.unresolvedNeeds.removeValue(forKey: transition.task) {
                error = reason
                book.failures[transition.task] = RunBook.Failure(exitCode: nil, reason: reason, hasLog: false)
                book.ended[transition.task] = moment.elapsed
            }
            // A task found up to date before the run spent no time executing; its event carries a duration
            // all the same, as a task checked at its start does.
            var event = self.transition(transition.task, from: transition.from, to: transition.to, error: error,
                                        duration: transition.to == .upToDate ? 0 : nil, at: moment, in: book)
            event.isUpToDateBeforeRun = [.ready, .executing, .upToDate].contains(transition.to)
                && book.plan.isUpToDateBeforeRun(transition.task)
            events.append(.transition(event))
        }
        self.events.yield(contentsOf: events)
    }

    func emit(_ index: Int, from: TaskState, to: TaskState, exitCode: Int32? = nil, error: String? = nil,
                      duration: Double? = nil, in book: inout RunBook) {
        events.yield(.transition(transition(index, from: from, to: to, exitCode: exitCode, error: error, duration: duration, in: book)))
    }

    /// When a transition happened: the wall clock and seconds since the run started.
    private struct Moment {
        var time: Date
        var elapsed: Double
    }

    private func transition(_ index: Int, from: TaskState, to: TaskState, exitCode: Int32? = nil, error: String? = nil,
                            duration: Double? = nil, at moment: Moment? = nil, in book: RunBook) -> TaskTransition {
        let task = book.tasks[index]
        var transition = TaskTransition(
            time: moment?.time ?? Date(), elapsed: moment?.elapsed ?? elapsed(), task: task.id, from: from, to: to,
            attempt: max(1, book.operations[index]?.attempt ?? 0), queue: queueNames[task.queue],
            exitCode: exitCode, error: error, duration: duration)
        transition.reason = reason(index, from: from, to: to, in: book)
        transition.executorJob = book.operations[index]?.executorJob
        if to == .executing, showsResources, !book.plan.tasks[index].isFanOut, !book.plan.isUpToDateBeforeRun(index) {
            let held = book.plan.holding(of: index)
            transition.resources = limitedResources.amounts(slots: held.slots, demands: held.demands)
            if from == .failed { transition.resourcesNote = book.operations[index]?.resourcesNote }
        }
        if from == .executing { transition.executorState = book.operations[index]?.executorState }
        if to.isTerminal, !book.cacheKeys.isEmpty, task.spec.isCached { transition.cacheKey = book.cacheKeys[index] }
        return transition
    }

    func elapsed() -> Double { (clock.now - startInstant).inSeconds }

}
