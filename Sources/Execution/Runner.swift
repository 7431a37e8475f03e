import Dispatch
import Foundation
import JobGraphBasics
import PipelineModel
import TaskGraph

/// Runs a checked task graph: each task an `Operation` on its named `OperationQueue`, started when the
/// `Plan` says so, its work done by a `TaskExecutor`, every transition sent to `events` in order.
///
/// Why operations reach their queue only once ready: corelibs' `OperationQueue` slows down
/// quadratically with operations that sit in it not yet ready (40,000 chained ones took 17.5 s to
/// add), so the queue only ever holds what may start now, and every step stays linear in tasks plus
/// edges. The `needs` are still `addDependency` edges, so the operations tell the truth to any
/// Foundation code that inspects them.
///
/// The Advanced NSOperations ideas live here as first-class parts: conditions (checked while a task is
/// `waiting`), mutual exclusivity (in the `Plan`), observers (the event stream) and operations that
/// produce operations (a dynamic fan-out adds its items, with their operations, while the run goes on).
public final class Runner: Sendable {
    /// Every event of the run, in order; finishes after `.finished`. Drain it from one task.
    public let events = EventChannel<RunEvent>()
    private let graph: TaskGraph
    private let configuration: RunConfiguration
    private let executor: any TaskExecutor
    private let history: (any TaskHistory)?
    private let resolver: Result<WorkResolver, TemplateError>
    private let queues: [OperationQueue]
    private let queueNames: [String]
    private let state: Locked<RunBook>
    private let clock = ContinuousClock()
    private let startInstant: ContinuousClock.Instant
    private let beginBox: WeakBox<Runner>

    /// - Parameters:
    ///   - history: up-to-date checks and the run's record; `nil` runs every task and remembers nothing.
    ///   - durations: expected seconds per graph node (from history), for the critical-path tie-break.
    public init(graph: TaskGraph, configuration: RunConfiguration, executor: any TaskExecutor,
                history: (any TaskHistory)? = nil, durations: [Double]? = nil) {
        self.graph = graph
        self.configuration = configuration
        self.executor = executor
        self.history = history
        resolver = Result { () throws(TemplateError) in try WorkResolver(graph: graph, configuration: configuration) }

        let layout = QueueLayout(graph: graph, jobs: configuration.jobs, processorCount: configuration.processorCount)
        queueNames = layout.names
        queues = layout.names.indices.map { index in
            let queue = OperationQueue()
            queue.name = layout.names[index]
            queue.maxConcurrentOperationCount = layout.limits[index]
            if let qos = layout.qualities[index] { queue.qualityOfService = qos.foundationValue }
            return queue
        }
        let plan = Plan(graph: graph, layout: layout, jobs: configuration.jobs, keepGoing: configuration.keepGoing, durations: durations)
        let tasks = graph.nodes.map { RunTask(node: $0, graph: graph, queue: layout.queueOfTask[$0.index]) }
        // The operations start their task through a weak reference: the runner owns them, not the reverse.
        let box = WeakBox<Runner>()
        beginBox = box
        let operations = tasks.indices.map { index in Self.operation(index, for: tasks[index], begin: box) }
        for (index, operation) in operations.enumerated() {
            // A service's dependents start once it is ready, while its operation still executes, so that
            // one kind of need is not an operation dependency (the Plan keeps the rule).
            for need in graph.dependencies[index] where graph.nodes[need].spec.service == nil {
                operation.addDependency(operations[need])
            }
        }
        state = Locked(RunBook(plan: plan, tasks: tasks, operations: operations))
        startInstant = clock.now
        beginBox.value = self
    }

    private static func operation(_ index: Int, for task: RunTask, begin: WeakBox<Runner>) -> TaskOperation {
        TaskOperation(index: index, queue: task.queue, name: task.id.rawValue, priority: task.spec.priority, qos: task.qos) { index in
            begin.value?.begin(index)
        }
    }

    /// Runs every task to a terminal state and returns what happened. Call once.
    public func run() async -> RunSummary {
        events.yield(.started(RunStart(pipelineFile: graph.pipeline.file, taskCount: graph.nodes.count,
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
        await runPipelineHook()
        let summary = makeSummary()
        events.yield(.finished(summary))
        events.finish()
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
                events.yield(.suspended(true))
                return true
            }
            if changed { queues.forEach { $0.isSuspended = true } }
        case .resume:
            let step = state.withLock { book -> Step? in
                guard book.isSuspended else { return nil }
                book.isSuspended = false
                events.yield(.suspended(false))
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
        let (attempt, task) = state.withLock { book in
            book.attemptStarted[index] = clock.now
            if book.firstStarted[index] == nil { book.firstStarted[index] = elapsed() }
            return (book.attempts[index], book.tasks[index])
        }
        if attempt == 1, let history, let answer = check(task, attempt: attempt, with: history) {
            state.withLock { $0.answers[index] = answer }
            if answer.isUpToDate && !configuration.force {
                state.withLock { $0.upToDate.insert(index) }
                complete(index)
                return
            }
            history.started(task.id, answer: answer)
        }
        launch(index, attempt: attempt)
    }

    /// The up-to-date answer for a task about to run; `nil` when its paths cannot be rendered (the attempt
    /// then fails with that error).
    private func check(_ task: RunTask, attempt: Int, with history: any TaskHistory) -> UpToDateAnswer? {
        guard let resolver = try? resolver.get(), let work = try? resolver.work(for: task, attempt: attempt),
              let paths = try? resolver.declaredPaths(for: task)
        else { return nil }
        return history.check(work, inputs: paths.inputs, outputs: paths.outputs, environmentNames: resolver.environmentNames(for: task))
    }

    private func launch(_ index: Int, attempt: Int) {
        let task = state.withLock { $0.tasks[index] }
        let events = self.events
        let id = task.id
        var reporter = TaskReporter(
            output: { line in events.yield(.output(task: id, line: line)) },
            progress: { bytes, total in events.yield(.progress(task: id, bytes: bytes, total: total)) },
            finished: { [weak self] result in self?.attemptEnded(index, attempt: attempt, result) })
        reporter.slurmJob = { [weak self] job in self?.state.withLock { $0.slurmJobs[index] = job } }
        do {
            let work = try resolver.get().work(for: task, attempt: attempt)
            let handle = try executor.start(work, reporter: reporter)
            let stopNow = state.withLock { book -> Bool in
                guard book.endedAttempt[index] < attempt else { return false }
                book.executions[index] = RunBook.Execution(attempt: attempt, handle: handle)
                return book.terminateOnStart.remove(index) != nil
            }
            if stopNow { handle.terminate(grace: configuration.terminationGrace) }
            if let service = task.spec.service, !stopNow { watchReadiness(of: index, task: task, service: service, handle: handle) }
        } catch let error as TemplateError {
            attemptEnded(index, attempt: attempt, .failed(exitCode: nil, reason: error.message))
        } catch {
            attemptEnded(index, attempt: attempt, .failed(exitCode: nil, reason: String(describing: error)))
        }
    }

    private func attemptEnded(_ index: Int, attempt: Int, _ result: TaskResult) {
        enum Next { case retry(Double), hook(String, RunTask), complete }
        let next = state.withLock { book -> Next in
            let task = book.tasks[index]
            book.executions[index] = nil
            book.endedAttempt[index] = attempt
            let stopped = book.stop != nil && book.terminated.contains(index)
            if case .failed(let exitCode, let reason) = result, attempt <= task.spec.retries, book.stop == nil,
               task.spec.service == nil {
                let duration = book.attemptStarted[index].map { seconds(clock.now - $0) }
                emit(index, from: .executing, to: .failed, exitCode: exitCode, error: reason + "; retrying", duration: duration, in: &book)
                return .retry(task.spec.retryDelay * pow(2, Double(attempt - 1)))
            }
            book.results[index] = result
            // Contract: completion hooks run once the terminal state is known, before dependents go on.
            let hook = result.isSuccess || book.stoppedServices.contains(index) ? task.spec.onSuccess : task.spec.onFailure
            if let hook, !stopped, let command = try? hook.rendered(in: (try? resolver.get())?.context(for: task)
                ?? TemplateContext(variables: [:]), as: .shellQuoted) {  // the loader checked the template's names
                return .hook(command, task)
            }
            return .complete
        }
        switch next {
        case .retry(let delay):
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in self?.retry(index, after: attempt) }
        case .hook(let command, let task):
            Task { [self] in
                let hookSucceeded = await runCommand(command, for: task)
                if !hookSucceeded {
                    state.withLock { book in
                        book.hookFailures.append(RunSummary.FailedTask(
                            id: task.id, exitCode: nil, reason: "its completion hook `\(command)` failed", allowed: false,
                            logPath: (try? resolver.get())?.logPath(for: task.id) ?? "", lastLines: []))
                    }
                }
                complete(index)
            }
        case .complete:
            complete(index)
        }
    }

    /// Records a task's final result in the Plan and moves the run on.
    private func complete(_ index: Int) {
        let step = state.withLock { book -> Step in
            let duration = book.attemptStarted[index].map { seconds(clock.now - $0) }
            let result = book.results[index] ?? .succeeded
            let outcome: Plan.Outcome
            var exitCode: Int32? = 0
            var error: String?
            let needers = book.plan.remainingNeeders(of: index)
            switch result {
            case _ where book.upToDate.contains(index):
                outcome = .upToDate
                exitCode = nil
            case .succeeded where book.tasks[index].spec.service != nil && needers > 0 && book.stop == nil
                && !book.stoppedServices.contains(index):
                // Contract: a service that dies early fails what still needs it, whatever its exit status.
                outcome = .failed
                let reason = "the service ended while \(needers) task\(needers == 1 ? "" : "s") still need\(needers == 1 ? "s" : "") it"
                book.failures[index] = (0, reason)
                error = reason
            case .succeeded:
                outcome = .succeeded
            case .failed(let code, _) where book.stoppedServices.contains(index) && !(book.stop != nil && book.terminated.contains(index)):
                // A service stopped because nothing needs it any more ended as planned; one that was running
                // when a signal stopped the run is cancelled like every other task, whichever stop came first.
                outcome = .succeeded
                exitCode = code
            case .failed(let code, var reason):
                let stoppedByUs = book.stop != nil && book.terminated.contains(index)
                outcome = stoppedByUs ? .cancelled : .failed
                // A service not ready in time was terminated by the runner: say why, not how its process ended.
                if book.notReady.contains(index) { reason = Self.notReadyReason(book.tasks[index]) }
                if !stoppedByUs { book.failures[index] = (code, reason) }
                exitCode = code
                error = reason
            }
            book.ended[index] = elapsed()
            let from = book.plan.states[index]
            let transitions = book.plan.record(index, outcome)
            guard let own = transitions.first else { return nextStep(after: [], in: &book) }
            emit(index, from: from, to: own.to, exitCode: exitCode, error: error, duration: duration, in: &book)
            let rest = Array(transitions.dropFirst())
            emit(rest, in: &book)
            var step = nextStep(after: rest, ended: index, in: &book)
            step.records.insert(HistoryEntry(task: book.tasks[index].id, state: own.to, attempts: own.to == .upToDate ? 0 : book.attempts[index],
                                             duration: own.to == .upToDate ? nil : duration, exitCode: exitCode, answer: book.answers[index]),
                                at: 0)
            return step
        }
        perform(step)
    }

    /// How a task ended, for the history, written outside the lock.
    private struct HistoryEntry {
        var task: TaskID
        var state: TaskState
        var attempts: Int
        var duration: Double?
        var exitCode: Int32?
        var answer: UpToDateAnswer?
    }

    private func retry(_ index: Int, after attempt: Int) {
        let stopped = state.withLock { book -> Bool in
            guard book.stop == nil else {
                book.terminated.insert(index)
                return true
            }
            book.attempts[index] = attempt + 1
            book.attemptStarted[index] = clock.now
            emit(index, from: .failed, to: .executing, in: &book)
            return false
        }
        if stopped {
            attemptEnded(index, attempt: attempt + 1, .failed(exitCode: nil, reason: "cancelled before retrying"))
        } else {
            launch(index, attempt: attempt + 1)
        }
    }

    private func stop(_ reason: RunStop) {
        enum Action { case terminate([any TaskExecution], resume: Bool, Step), kill([any TaskExecution]) }
        let action = state.withLock { book -> Action in
            book.stopRequests += 1
            let handles = book.executions.values.map(\.handle)
            guard book.stopRequests == 1 else { return .kill(handles) }
            book.stop = reason
            events.yield(.stopping(reason))
            // A stop lifts a suspension: `always` tasks still run (contract), and held ones would hang the run.
            let resume = book.isSuspended
            if resume {
                book.isSuspended = false
                events.yield(.suspended(false))
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

    // MARK: - Work the Plan asks for

    /// Checks a waiting task's conditions in order, stopping at the first unmet one.
    private func checkConditions(of index: Int) async {
        let task = state.withLock { $0.tasks[index] }
        var met = true
        var unmet: String?
        do {
            let resolver = try resolver.get()
            let context = ConditionContext(
                workingDirectory: try resolver.fanOutDirectory(for: task), environment: try resolver.environment(for: task),
                runCommand: { [weak self] command in await self?.runCommand(command, for: task) ?? false })
            for condition in task.ownConditions {
                let check = try condition.check(in: resolver.context(for: task), patience: configuration.reachablePatience)
                if await !check.isMet(in: context) {
                    met = false
                    unmet = check.summary
                    break
                }
            }
        } catch {
            met = false
            unmet = "\(error)"
        }
        let step = state.withLock { book in
            let transitions = book.plan.conditionsChecked(index, met: met)
            if let first = transitions.first, first.task == index, first.to == .skipped, let unmet {
                emit(index, from: first.from, to: .skipped, error: "condition not met: \(unmet)", in: &book)
                emit(Array(transitions.dropFirst()), in: &book)
            } else {
                emit(transitions, in: &book)
            }
            return nextStep(after: transitions, in: &book)
        }
        perform(step)
    }

    /// Reads a dynamic fan-out's items and adds them, each with its operation, to the running queues.
    private func expand(_ group: Int) {
        let task = state.withLock { $0.tasks[group] }
        var items: [ItemValue] = []
        var failure: String?
        do {
            let resolver = try resolver.get()
            guard case .file(let source)? = task.spec.foreach else { throw FanOutItems.ReadError(description: "not a fan-out") }
            let shown = try source.rendered(in: resolver.context(for: task), as: .confinedPath)
            let directory = try resolver.fanOutDirectory(for: task)
            items = try FanOutItems.read(shown.hasPrefix("/") ? shown : directory + "/" + shown, shownAs: shown)
        } catch {
            failure = "\(error)"
        }
        let step = state.withLock { book -> Step in
            if let failure {
                book.failures[group] = (nil, failure)
                book.ended[group] = elapsed()
                let transitions = book.plan.record(group, .failed)
                if let own = transitions.first {
                    emit(group, from: .executing, to: own.to, error: failure, in: &book)
                }
                let rest = Array(transitions.dropFirst())
                emit(rest, in: &book)
                return nextStep(after: rest, ended: group, in: &book)
            }
            let groupTask = book.tasks[group]
            let planItems = items.indices.map { number in
                var item = book.plan.tasks[group]
                item.id = groupTask.id.item(String(number))
                item.isFanOut = false
                item.hasConditions = groupTask.spec.conditions.contains(where: \.usesItem)
                return item
            }
            let (added, transitions) = book.plan.expand(group, items: planItems)
            for (number, index) in added.enumerated() {
                let runTask = RunTask(item: items[number], number: number, of: groupTask)
                book.tasks.append(runTask)
                let operation = Self.operation(index, for: runTask, begin: beginBox)
                book.operations.append(operation)
                book.growBookkeeping()
            }
            emit(transitions, in: &book)
            return nextStep(after: transitions, in: &book)
        }
        perform(step)
    }

    /// Waits until a service is ready, then lets its dependents go; not ready in time fails it.
    private func watchReadiness(of index: Int, task: RunTask, service: ServiceSpec, handle: any TaskExecution) {
        Task { [self] in
            let timeout = service.timeout ?? Self.defaultServiceTimeout
            let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
            var ready = service.ready == nil
            if let condition = service.ready, let resolver = try? resolver.get(),
               let check = try? condition.check(in: resolver.context(for: task)),
               let directory = try? resolver.workingDirectory(for: task), let environment = try? resolver.environment(for: task) {
                let context = ConditionContext(workingDirectory: directory, environment: environment,
                                               runCommand: { [weak self] command in await self?.runCommand(command, for: task) ?? false })
                while !ready, ContinuousClock.now < deadline {
                    if state.withLock({ $0.plan.states[index] != .executing }) { return }  // it ended on its own
                    ready = await check.isMet(in: context)
                    if !ready { try? await Task.sleep(for: .milliseconds(100)) }  // cancellation just ends the wait
                }
            }
            guard ready else {
                state.withLock { book in book.notReady.insert(index) }
                handle.terminate(grace: configuration.terminationGrace)
                return
            }
            let step = state.withLock { book in
                let transitions = book.plan.serviceReady(index)
                emit(transitions, in: &book)
                return nextStep(after: transitions, in: &book)
            }
            perform(step)
        }
    }

    /// Runs a shell command for a task (a hook or a condition) through the executor; true on success.
    private func runCommand(_ command: String, for task: RunTask) async -> Bool {
        guard let work = try? resolver.get().commandWork(command, for: task) else { return false }
        let events = self.events
        return await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            let reporter = TaskReporter(output: { line in events.yield(.output(task: task.id, line: line)) },
                                        finished: { result in done.resume(returning: result.isSuccess) })
            do {
                _ = try executor.start(work, reporter: reporter)
            } catch {
                done.resume(returning: false)
            }
        }
    }

    /// The pipeline's own `on_success` / `on_failure`, once every task has ended.
    private func runPipelineHook() async {
        let failed = state.withLock { book in !book.failures.isEmpty || book.stop != nil }
        guard let hook = failed ? graph.pipeline.onFailure : graph.pipeline.onSuccess,
              let command = try? hook.rendered(in: TemplateContext(variables: Dictionary(
                  graph.pipeline.variables.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })), as: .shellQuoted),
              let first = graph.nodes.first
        else { return }
        var task = RunTask(node: first, graph: graph, queue: 0)
        task.id = TaskID(failed ? "on_failure" : "on_success")
        task.spec.cwd = nil
        task.spec.environment = []
        task.item = nil
        if await !runCommand(command, for: task) {
            state.withLock { book in
                book.hookFailures.append(RunSummary.FailedTask(
                    id: task.id, exitCode: nil, reason: "the pipeline's hook `\(command)` failed", allowed: false,
                    logPath: (try? self.resolver.get())?.logPath(for: task.id) ?? "", lastLines: []))
            }
        }
    }

    // MARK: - Steps decided under the lock, carried out outside it

    /// What to do after the Plan moved: finish the operations of tasks that ended, hand the newly
    /// startable ones to their queues, do what the Plan asked, and wake `run()` at the end.
    private struct Step {
        var finishedWithoutRunning: [Int] = []
        var start: [Int] = []
        var requests = Plan.Requests()
        var operations: [Int: TaskOperation] = [:]
        var stopServices: [any TaskExecution] = []
        var waiter: CheckedContinuation<Void, Never>?
        /// Tasks that ended, for the history: every one must be recorded, including those that never
        /// ran (skipped, cancelled), or the history would count them as unfinished.
        var records: [HistoryEntry] = []
    }

    /// - Parameter ended: a task that has just ended by running, whose operation finishes too.
    private func nextStep(after transitions: [Plan.Transition], ended: Int? = nil, in book: inout RunBook) -> Step {
        var step = Step()
        step.finishedWithoutRunning = transitions.filter { $0.to.isTerminal }.map(\.task) + (ended.map { [$0] } ?? [])
        if history != nil {
            step.records = transitions.filter { $0.to.isTerminal }.map { transition in
                HistoryEntry(task: book.tasks[transition.task].id, state: transition.to, attempts: book.attempts[transition.task],
                             duration: nil, exitCode: nil, answer: nil)
            }
        }
        if !book.isSuspended {
            let taken = book.plan.take()
            emit(taken.transitions, in: &book)
            step.start = taken.started
            // The event goes out when the Plan starts the task, under the lock that ordered it after every
            // outcome recorded so far. Emitted later, from the queue's thread, it could follow a failure
            // recorded in between, and the stream would show a task starting after a failure (contract:
            // "no new task starts after a failure") although the Plan had started it before.
            for index in step.start {
                book.attempts[index] += 1
                emit(index, from: .ready, to: .executing, in: &book)
            }
        }
        step.requests = book.plan.takeRequests()
        for index in step.requests.stopServices {
            book.stoppedServices.insert(index)
            if let handle = book.executions[index]?.handle { step.stopServices.append(handle) }
        }
        for index in step.finishedWithoutRunning + step.start { step.operations[index] = book.operations[index] }
        if book.plan.isFinished {
            step.waiter = book.waiter
            book.waiter = nil
        }
        return step
    }

    private func perform(_ step: Step) {
        for index in step.finishedWithoutRunning {
            guard let operation = step.operations[index], !operation.isFinished else { continue }
            if !operation.isExecuting { operation.cancel() }
            operation.finish()
        }
        for index in step.start {
            guard let operation = step.operations[index] else { continue }
            queues[operation.queue].addOperation(operation)
        }
        // After the starts: the next task need not wait for this one's row to be written.
        for record in step.records {
            history?.ended(record.task, state: record.state, attempts: record.attempts, duration: record.duration,
                           exitCode: record.exitCode, answer: record.answer)
        }
        for handle in step.stopServices { handle.terminate(grace: configuration.terminationGrace) }
        for index in step.requests.checkConditions { Task { await checkConditions(of: index) } }
        for index in step.requests.expand { DispatchQueue.global().async { [self] in expand(index) } }
        step.waiter?.resume()
    }

    // MARK: - Events

    private func emit(_ transitions: [Plan.Transition], in book: inout RunBook) {
        for transition in transitions {
            // A fan-out runs no operation of its own: its times come from the Plan's transitions.
            if book.plan.tasks[transition.task].isFanOut {
                if transition.to == .executing { book.firstStarted[transition.task] = elapsed() }
                if transition.to.isTerminal, book.ended[transition.task] == nil { book.ended[transition.task] = elapsed() }
            }
            emit(transition.task, from: transition.from, to: transition.to, in: &book)
        }
    }

    private func emit(_ index: Int, from: TaskState, to: TaskState, exitCode: Int32? = nil, error: String? = nil,
                      duration: Double? = nil, in book: inout RunBook) {
        let task = book.tasks[index]
        var transition = TaskTransition(
            time: Date(), elapsed: elapsed(), task: task.id, from: from, to: to,
            attempt: max(1, book.attempts[index]), queue: queueNames[task.queue],
            exitCode: exitCode, error: error, duration: duration)
        transition.slurmJob = book.slurmJobs[index]
        events.yield(.transition(transition))
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
        var failures = book.failures.keys.sorted().compactMap { index -> RunSummary.FailedTask? in
            guard let failure = book.failures[index] else { return nil }
            let task = book.tasks[index]
            // A task that printed nothing has no log (it is created by the first line): name none then.
            let logPath = resolver.map { $0.logPath(for: task.id) }.flatMap { FileManager.default.fileExists(atPath: $0) ? $0 : nil } ?? ""
            return RunSummary.FailedTask(id: task.id, exitCode: failure.exitCode, reason: failure.reason,
                                         allowed: task.spec.allowFailure, logPath: logPath,
                                         lastLines: LogTail.lastLines(of: logPath, count: 10))
        }
        failures += book.hookFailures
        return RunSummary(counts: counts, wallTime: elapsed(), criticalPath: criticalPathTaken(book), failures: failures, stop: book.stop)
    }

    /// `not ready within 10s`, for a service whose `ready` condition did not hold in time.
    private static func notReadyReason(_ task: RunTask) -> String {
        let timeout = task.spec.service?.timeout ?? Self.defaultServiceTimeout
        let shown = timeout == timeout.rounded() ? "\(Int(timeout))s" : "\(timeout)s"
        return "not ready within \(shown)"
    }

    /// Seconds a service may take to become ready when its `timeout` is not given.
    static let defaultServiceTimeout: Double = 30

    /// Walks back from the task that ended last through, at each step, the need that ended last.
    /// A service ends when it is stopped, after what it served, so the walk starts at no service and
    /// follows only needs that ended before the task started.
    private func criticalPathTaken(_ book: RunBook) -> [TaskID] {
        func endTime(_ index: Int) -> Double { book.ended[index] ?? -1 }
        var current = book.ended.indices.filter { book.ended[$0] != nil && book.tasks[$0].spec.service == nil }
            .max { endTime($0) < endTime($1) }
        var path: [TaskID] = []
        while let index = current {
            path.append(book.tasks[index].id)
            let started = book.firstStarted[index] ?? .infinity
            current = book.tasks[index].dependencies.filter { book.ended[$0].map { $0 <= started } ?? false }
                .max { endTime($0) < endTime($1) }
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
    /// Graph nodes first, then the items dynamic fan-outs add, in the Plan's numbering.
    var tasks: [RunTask]
    var operations: [TaskOperation]
    var attempts: [Int]
    var attemptStarted: [ContinuousClock.Instant?]
    var firstStarted: [Double?]
    var ended: [Double?]
    var endedAttempt: [Int]
    var results: [Int: TaskResult] = [:]
    var answers: [Int: UpToDateAnswer] = [:]
    /// Tasks found up to date: they end without running.
    var upToDate: Set<Int> = []
    var executions: [Int: Execution] = [:]
    /// The Slurm job or step of each task's latest attempt, for its transitions.
    var slurmJobs: [Int: String] = [:]
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

    init(plan: Plan, tasks: [RunTask], operations: [TaskOperation]) {
        self.plan = plan
        self.tasks = tasks
        self.operations = operations
        let count = tasks.count
        attempts = Array(repeating: 0, count: count)
        attemptStarted = Array(repeating: nil, count: count)
        firstStarted = Array(repeating: nil, count: count)
        ended = Array(repeating: nil, count: count)
        endedAttempt = Array(repeating: 0, count: count)
    }

    /// Makes room for one more task (a fan-out item).
    mutating func growBookkeeping() {
        attempts.append(0)
        attemptStarted.append(nil)
        firstStarted.append(nil)
        ended.append(nil)
        endedAttempt.append(0)
    }
}

/// Holds a reference weakly, so closures made before an object exists can reach it later.
final class WeakBox<Value: AnyObject & Sendable>: @unchecked Sendable {
    // Written once in `Runner.init` before any operation can start, read afterwards: no lock needed.
    weak var value: Value?
}
