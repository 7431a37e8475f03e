import Dispatch
import Foundation
import PipelineModel
import Synchronization
import TaskGraph

/// Runs a checked task graph: each task an `Operation` on its named `OperationQueue`, started when the
/// `Plan` says so, its work done by a `TaskExecutor`, every transition sent to `events` in order.
///
/// Why operations reach their queue only once ready: corelibs' `OperationQueue` slows down
/// quadratically with operations that sit in it not yet ready (40,000 chained ones took 17.5 s to
/// add), so the queue only ever holds what may start now, and every step stays linear in tasks plus
/// edges. The `needs` are still `addDependency` edges, so the operations tell the truth to any
/// Foundation code that inspects them.
public final class Runner: Sendable {
    /// Every event of the run, in order; finishes after `.finished`. Drain it from one task.
    public let events: AsyncStream<RunEvent>
    private let continuation: AsyncStream<RunEvent>.Continuation
    private let graph: TaskGraph
    private let configuration: RunConfiguration
    private let executor: any TaskExecutor
    private let resolver: Result<WorkResolver, TemplateError>
    private let queues: [OperationQueue]
    private let queueNames: [String]
    private let queueOfTask: [Int]
    private let operations: [TaskOperation]
    private let state: Mutex<RunBook>
    private let clock = ContinuousClock()
    private let startInstant: ContinuousClock.Instant

    public init(graph: TaskGraph, configuration: RunConfiguration, executor: any TaskExecutor,
                durations: [Double]? = nil) {
        (events, continuation) = AsyncStream.makeStream(of: RunEvent.self, bufferingPolicy: .unbounded)
        self.graph = graph
        self.configuration = configuration
        self.executor = executor
        resolver = Result { () throws(TemplateError) in try WorkResolver(graph: graph, configuration: configuration) }

        let layout = QueueLayout(graph: graph, jobs: configuration.jobs, processorCount: configuration.processorCount)
        queueNames = layout.names
        queueOfTask = layout.queueOfTask
        queues = layout.names.indices.map { index in
            let queue = OperationQueue()
            queue.name = layout.names[index]
            queue.maxConcurrentOperationCount = layout.limits[index]
            if let qos = layout.qualities[index] { queue.qualityOfService = qos.foundationValue }
            return queue
        }
        let plan = Plan(graph: graph, layout: layout, jobs: configuration.jobs, keepGoing: configuration.keepGoing, durations: durations)
        state = Mutex(RunBook(plan: plan))
        startInstant = clock.now

        // The operations start their task through a weak reference: the runner owns them, not the reverse.
        let begin = WeakBox<Runner>()
        operations = graph.nodes.indices.map { index in
            TaskOperation(index: index, name: graph.nodes[index].id.rawValue, priority: graph.nodes[index].spec.priority,
                          qos: graph.qualityOfService(ofNode: index)) { index in begin.value?.begin(index) }
        }
        for (index, operation) in operations.enumerated() {
            for need in graph.dependencies[index] { operation.addDependency(operations[need]) }
        }
        begin.value = self
    }

    /// Runs every task to a terminal state and returns what happened. Call once.
    public func run() async -> RunSummary {
        continuation.yield(.started(RunStart(pipelineFile: graph.pipeline.file, taskCount: graph.nodes.count,
                                             jobs: configuration.jobs, time: Date())))
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
        let summary = makeSummary()
        continuation.yield(.finished(summary))
        continuation.finish()
        return summary
    }

    /// Steers the run from outside: signals and their like. Safe from any thread.
    public func control(_ command: RunControl) {
        switch command {
        case .interrupt, .terminate:
            stop(command == .interrupt ? .interrupt : .terminate)
        case .suspend:
            let changed = state.withLock { book in
                // A stopping run starts only `always` and `failure` tasks, and those must run (contract).
                guard book.stop == nil, !book.isSuspended else { return false }
                book.isSuspended = true
                continuation.yield(.suspended(true))
                return true
            }
            if changed { queues.forEach { $0.isSuspended = true } }
        case .resume:
            let step = state.withLock { book -> Step? in
                guard book.isSuspended else { return nil }
                book.isSuspended = false
                continuation.yield(.suspended(false))
                return nextStep(after: [], in: &book)
            }
            guard let step else { return }
            queues.forEach { $0.isSuspended = false }
            perform(step)
        case .pauseProcesses:
            state.withLock { book in Array(book.executions.values.map(\.handle)) }.forEach { $0.pause() }
        case .continueProcesses:
            state.withLock { book in Array(book.executions.values.map(\.handle)) }.forEach { $0.resume() }
        }
    }

    // MARK: - One task's life

    /// Called by a task's operation when its queue starts it.
    private func begin(_ index: Int) {
        let attempt = state.withLock { book in
            book.attemptStarted[index] = clock.now
            if book.firstStarted[index] == nil { book.firstStarted[index] = elapsed() }
            return book.attempts[index]
        }
        launch(index, attempt: attempt)
    }

    private func launch(_ index: Int, attempt: Int) {
        let id = graph.nodes[index].id
        let continuation = self.continuation
        let reporter = TaskReporter(
            output: { line in continuation.yield(.output(task: id, line: line)) },
            progress: { bytes, total in continuation.yield(.progress(task: id, bytes: bytes, total: total)) },
            finished: { [weak self] result in self?.attemptEnded(index, attempt: attempt, result) })
        do {
            let work = try resolver.get().work(for: index, attempt: attempt)
            let handle = try executor.start(work, reporter: reporter)
            let stopNow = state.withLock { book -> Bool in
                guard book.endedAttempt[index] < attempt else { return false }
                book.executions[index] = RunBook.Execution(attempt: attempt, handle: handle)
                return book.terminateOnStart.remove(index) != nil
            }
            if stopNow { handle.terminate(grace: configuration.terminationGrace) }
        } catch let error as TemplateError {
            attemptEnded(index, attempt: attempt, .failed(exitCode: nil, reason: error.message))
        } catch {
            attemptEnded(index, attempt: attempt, .failed(exitCode: nil, reason: String(describing: error)))
        }
    }

    private func attemptEnded(_ index: Int, attempt: Int, _ result: TaskResult) {
        let spec = graph.nodes[index].spec
        enum Next { case retry(Double), step(Step) }
        let next = state.withLock { book -> Next in
            book.executions[index] = nil
            book.endedAttempt[index] = attempt
            let duration = book.attemptStarted[index].map { seconds(clock.now - $0) }
            if case .failed(let exitCode, let reason) = result, attempt <= spec.retries, book.stop == nil {
                emit(index, from: .executing, to: .failed, exitCode: exitCode, error: reason + "; retrying", duration: duration, in: &book)
                return .retry(spec.retryDelay * pow(2, Double(attempt - 1)))
            }
            let outcome: Plan.Outcome
            switch result {
            case .succeeded: outcome = .succeeded
            case .failed(let exitCode, let reason):
                let stoppedByUs = book.stop != nil && book.terminated.contains(index)
                outcome = stoppedByUs ? .cancelled : .failed
                if !stoppedByUs { book.failures[index] = (exitCode, reason) }
            }
            book.ended[index] = elapsed()
            let transitions = book.plan.record(index, outcome)
            if case .failed(let exitCode, let reason) = result {
                emit(index, from: .executing, to: transitions[0].to, exitCode: exitCode, error: reason, duration: duration, in: &book)
            } else {
                emit(index, from: .executing, to: transitions[0].to, exitCode: 0, duration: duration, in: &book)
            }
            let rest = Array(transitions.dropFirst())
            emit(rest, in: &book)
            return .step(nextStep(after: rest, in: &book))
        }
        switch next {
        case .retry(let delay):
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in self?.retry(index, after: attempt) }
        case .step(let step):
            operations[index].finish()
            perform(step)
        }
    }

    private func retry(_ index: Int, after attempt: Int) {
        let stopped = state.withLock { book -> Bool in
            guard book.stop == nil else { return true }
            book.attempts[index] = attempt + 1
            book.attemptStarted[index] = clock.now
            emit(index, from: .failed, to: .executing, in: &book)
            return false
        }
        if stopped {
            book(terminated: index)
            attemptEnded(index, attempt: attempt + 1, .failed(exitCode: nil, reason: "cancelled before retrying"))
        } else {
            launch(index, attempt: attempt + 1)
        }
    }

    private func book(terminated index: Int) {
        state.withLock { book in _ = book.terminated.insert(index) }
    }

    private func stop(_ reason: RunStop) {
        enum Action { case terminate([any TaskExecution], resume: Bool, Step), kill([any TaskExecution]) }
        let action = state.withLock { book -> Action in
            book.stopRequests += 1
            let handles = book.executions.values.map(\.handle)
            guard book.stopRequests == 1 else { return .kill(handles) }
            book.stop = reason
            continuation.yield(.stopping(reason))
            // A stop lifts a suspension: `always` tasks still run (contract), and held ones would hang the run.
            let resume = book.isSuspended
            if resume {
                book.isSuspended = false
                continuation.yield(.suspended(false))
            }
            for index in book.plan.states.indices where book.plan.states[index] == .executing {
                book.terminated.insert(index)
                if book.executions[index] == nil { book.terminateOnStart.insert(index) }
            }
            let transitions = book.plan.cancel()
            emit(transitions, in: &book)
            return .terminate(handles, resume: resume, nextStep(after: transitions, in: &book))
        }
        switch action {
        case .terminate(let handles, let resume, let step):
            if resume { queues.forEach { $0.isSuspended = false } }
            handles.forEach { $0.terminate(grace: configuration.terminationGrace) }
            perform(step)
        case .kill(let handles):
            handles.forEach { $0.kill() }
        }
    }

    // MARK: - Steps decided under the lock, carried out outside it

    /// What to do after the Plan moved: finish the operations of tasks that ended without running,
    /// hand the newly startable ones to their queues, and wake `run()` at the end.
    private struct Step {
        var finishedWithoutRunning: [Int] = []
        var start: [Int] = []
        var waiter: CheckedContinuation<Void, Never>?
    }

    private func nextStep(after transitions: [Plan.Transition], in book: inout RunBook) -> Step {
        var step = Step()
        step.finishedWithoutRunning = transitions.filter { $0.to.isTerminal }.map(\.task)
        if !book.isSuspended {
            step.start = book.plan.take()
            // The event goes out when the Plan starts the task, under the lock that ordered it after every
            // outcome recorded so far. Emitted later, from the queue's thread, it could follow a failure
            // recorded in between, and the stream would show a task starting after a failure (contract:
            // "no new task starts after a failure") although the Plan had started it before.
            for index in step.start {
                book.attempts[index] += 1
                emit(index, from: .ready, to: .executing, in: &book)
            }
        }
        if book.plan.isFinished {
            step.waiter = book.waiter
            book.waiter = nil
        }
        return step
    }

    private func perform(_ step: Step) {
        for index in step.finishedWithoutRunning {
            operations[index].cancel()
            operations[index].finish()
        }
        for index in step.start { queues[queueOfTask[index]].addOperation(operations[index]) }
        step.waiter?.resume()
    }

    // MARK: - Events

    private func emit(_ transitions: [Plan.Transition], in book: inout RunBook) {
        for transition in transitions {
            emit(transition.task, from: transition.from, to: transition.to, in: &book)
        }
    }

    private func emit(_ index: Int, from: TaskState, to: TaskState, exitCode: Int32? = nil, error: String? = nil,
                      duration: Double? = nil, in book: inout RunBook) {
        continuation.yield(.transition(TaskTransition(
            time: Date(), elapsed: elapsed(), task: graph.nodes[index].id, from: from, to: to,
            attempt: max(1, book.attempts[index]), queue: queueNames[queueOfTask[index]],
            exitCode: exitCode, error: error, duration: duration)))
    }

    private func elapsed() -> Double { seconds(clock.now - startInstant) }

    private func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    // MARK: - Summary

    private func makeSummary() -> RunSummary {
        let book = state.withLock { $0 }
        var counts: [TaskState: Int] = [:]
        for taskState in book.plan.states { counts[taskState, default: 0] += 1 }
        let resolver = try? self.resolver.get()  // only for log paths; a resolver error already failed every task
        let failures = book.failures.keys.sorted().map { index in
            let failure = book.failures[index]!
            let logPath = resolver?.logPath(for: graph.nodes[index].id) ?? ""
            return RunSummary.FailedTask(id: graph.nodes[index].id, exitCode: failure.exitCode, reason: failure.reason,
                                         allowed: graph.nodes[index].spec.allowFailure, logPath: logPath,
                                         lastLines: LogTail.lastLines(of: logPath, count: 10))
        }
        return RunSummary(counts: counts, wallTime: elapsed(), criticalPath: criticalPathTaken(book), failures: failures, stop: book.stop)
    }

    /// Walks back from the task that ended last through, at each step, the need that ended last.
    private func criticalPathTaken(_ book: RunBook) -> [TaskID] {
        var current = book.ended.indices.filter { book.ended[$0] != nil }.max { book.ended[$0]! < book.ended[$1]! }
        var path: [TaskID] = []
        while let index = current {
            path.append(graph.nodes[index].id)
            current = graph.dependencies[index].filter { book.ended[$0] != nil }.max { book.ended[$0]! < book.ended[$1]! }
        }
        return path.reversed()
    }
}

/// The run's mutable state, guarded by the runner's one lock.
struct RunBook {
    struct Execution {
        var attempt: Int
        var handle: any TaskExecution
    }

    var plan: Plan
    var attempts: [Int]
    var attemptStarted: [ContinuousClock.Instant?]
    var firstStarted: [Double?]
    var ended: [Double?]
    var endedAttempt: [Int]
    var executions: [Int: Execution] = [:]
    var failures: [Int: (exitCode: Int32?, reason: String)] = [:]
    /// Tasks stopped by an interrupt: their end is `cancelled`, not `failed`.
    var terminated: Set<Int> = []
    /// Executing tasks whose handle had not arrived when the run was stopped.
    var terminateOnStart: Set<Int> = []
    var isSuspended = false
    var stop: RunStop?
    var stopRequests = 0
    var waiter: CheckedContinuation<Void, Never>?

    init(plan: Plan) {
        self.plan = plan
        let count = plan.tasks.count
        attempts = Array(repeating: 0, count: count)
        attemptStarted = Array(repeating: nil, count: count)
        firstStarted = Array(repeating: nil, count: count)
        ended = Array(repeating: nil, count: count)
        endedAttempt = Array(repeating: 0, count: count)
    }
}

/// Holds a reference weakly, so closures made before an object exists can reach it later.
final class WeakBox<Value: AnyObject & Sendable>: @unchecked Sendable {
    // Written once in `Runner.init` before any operation can start, read afterwards: no lock needed.
    weak var value: Value?
}
