import Dispatch
import Foundation
import JobGraphBasics
import PipelineModel
import TaskGraph

/// One task's life: its check, its attempts, its retries and its end.
extension Runner {
    // MARK: - One task's life

    /// Called by a task's operation when it is started, on the thread that learnt it may start: often the
    /// event loop's, which must not block. Takes no lock: the Plan's start wrote the operation's times.
    func begin(_ operation: TaskOperation) {
        // An executor that could not be set up for the run (a refused allocation) fails every attempt with why.
        if let setupFailure = operation.setupFailure {
            attemptEnded(operation, attempt: 1, .failed(exitCode: nil, reason: setupFailure))
            return
        }
        let task = operation.task
        // Resolved once: the up-to-date check and the executor take the same work.
        let work = Result { () throws -> TaskWork in try resolver.get().work(for: task, attempt: 1) }
        guard let history, case .success(let resolved) = work else {
            launch(operation, attempt: 1, work: work)
            return
        }
        // A task checked before the run (its needs were all up to date) is not checked again. One whose
        // check reads nothing (it declares no paths) is checked here. A task whose paths do not render is
        // not checked: its launch fails with the error.
        let decided = operation.answer  // the hand-over `TaskOperation` describes
        let paths = decided == nil ? try? resolver.get().declaredPaths(for: task) : nil
        let answer: UpToDateAnswer? = if let decided {
            decided
        } else if let paths, !history.checkReads(inputs: paths.inputs, outputs: paths.outputs) {
            check(task, work: resolved, paths: paths, with: history)
        } else {
            nil
        }
        // Started here unless its start commits (the withdrawal of a success it had). Handed to a worker,
        // each untracked task waited for that thread to wake: the clean runs of Benchmarks/run-graphs.sh's
        // 10,000-task chain and layered graphs took 1.10x as long (farm-bench, 5 alternated pairs each).
        if let answer, !history.startCommits(answer: answer) {
            start(operation, work: resolved, answer: answer, isKept: decided != nil, history: history)
            return
        }
        // The check reads the store and hashes every input whose status changed (a 1 GB input takes
        // seconds), and the start's record may commit: on a worker, so that every other task's output and
        // exit go on meanwhile. It then carries the start on from there, as the loop's thread would have.
        checks[operation.index % checks.count].async { [self] in
            guard let answer = answer ?? paths.flatMap({ check(task, work: resolved, paths: $0, with: history) }) else {
                launch(operation, attempt: 1, work: work)
                return
            }
            start(operation, work: resolved, answer: answer, isKept: decided != nil, history: history)
        }
    }

    /// Ends a first attempt found up to date, or records its start and launches it.
    /// - Parameter isKept: `answer` is the one the operation holds already (from the pass before the run).
    private func start(_ operation: TaskOperation, work: TaskWork, answer: UpToDateAnswer, isKept: Bool,
                       history: any TaskHistory) {
        let isUpToDate = answer.isUpToDate && !configuration.force
        if isUpToDate {
            let step = state.withLock { book in
                operation.answer = answer
                operation.outcomeWithoutRunning = .upToDate
                return completion(of: operation, in: &book)
            }
            perform(step)
            return
        }
        history.started(operation.task.id, answer: answer)
        if restoresFromCache(operation, work: work, answer: answer, isKept: isKept) { return }
        launch(operation, attempt: 1, work: .success(work), answer: isKept ? nil : answer)
    }

    /// The up-to-date answer for a task about to run, with its declared paths rendered.
    private func check(_ task: RunTask, work: TaskWork, paths: (inputs: [String], outputs: [String]),
                       with history: any TaskHistory) -> UpToDateAnswer? {
        guard let resolver = try? resolver.get() else { return nil }
        return history.check(work, inputs: paths.inputs, outputs: paths.outputs, environmentNames: resolver.environmentNames(for: task))
    }

    /// Hands an attempt to the executor.
    /// - Parameter answer: the up-to-date answer found at the start, for the operation to keep.
    func launch(_ operation: TaskOperation, attempt: Int, work: Result<TaskWork, any Error>? = nil,
                answer: UpToDateAnswer? = nil) {
        let events = self.events
        let task = operation.task
        let id = task.id
        var reporter = TaskReporter(
            output: { line in events.yield(.output(task: id, line: line)) },
            progress: { bytes, total in events.yield(.progress(task: id, bytes: bytes, total: total)) },
            // With the answer: the attempt may end before `start` returns the handle.
            finished: { [weak self] result in self?.attemptEnded(operation, attempt: attempt, result, answer: answer, byExecutor: true) })
        reporter.executorJob = { [weak self] job in
            self?.state.withLock { _ in
                operation.executorJob = job
                operation.executorState = nil  // an earlier attempt's
            }
        }
        reporter.executorState = { [weak self] slurmState in self?.state.withLock { _ in operation.executorState = slurmState } }
        reporter.interruptsRun = { [weak self] in self?.control(.interrupt) }
        do {
            let work = try (work ?? Result { () throws -> TaskWork in try resolver.get().work(for: task, attempt: attempt) }).get()
            let handle = try executor.start(work, reporter: reporter)
            // One lock for the start: the answer, the handle, and a stop that came first.
            let stopNow = state.withLock { _ -> Bool in
                if let answer { operation.answer = answer }
                guard operation.endedAttempt < attempt else { return false }
                operation.handle = handle
                operation.phase = .executing
                defer { operation.terminatesOnStart = false }
                return operation.terminatesOnStart
            }
            if stopNow { handle.terminate(grace: configuration.terminationGrace) }
            if let service = task.spec.service, !stopNow { watchReadiness(of: operation, service: service, handle: handle) }
        } catch let error as TemplateError {
            attemptEnded(operation, attempt: attempt, .failed(exitCode: nil, reason: error.message), answer: answer)
        } catch {
            attemptEnded(operation, attempt: attempt, .failed(exitCode: nil, reason: String(describing: error)), answer: answer)
        }
    }

    /// An attempt ended: retries it, runs the task's completion hook, or completes the task, under one lock.
    /// - Parameters:
    ///   - answer: the up-to-date answer found at the attempt's start, for the operation to keep.
    ///   - byExecutor: the executor ended it, so it had the attempt (and its log). Noted here, the one place:
    ///     an attempt may end before `start` returns to `launch`, and a quick failure under load lost its
    ///     log's name and last lines in the summary when `launch` noted it (`RunCommandTests`, CI at b352ed1).
    func attemptEnded(_ operation: TaskOperation, attempt: Int, _ result: TaskResult, answer: UpToDateAnswer? = nil,
                      byExecutor: Bool = false) {
        enum Next { case retry(Double), hook(String), complete(Step) }
        let task = operation.task
        let next = state.withLock { book -> Next in
            var result = result
            if let answer { operation.answer = answer }
            if byExecutor { operation.isHandedToExecutor = true }
            operation.handle = nil
            operation.endedAttempt = attempt
            let stopped = book.stop != nil && operation.isTerminated
            if case .failed(let exitCode, let reason, let cause) = result, attempt <= task.spec.retries, book.stop == nil,
               task.spec.service == nil {
                if task.spec.allowsRetry(cause: cause, exitCode: exitCode) {
                    let duration = (clock.now - operation.attemptStarted).inSeconds
                    emit(operation.index, from: .executing, to: .failed, exitCode: exitCode, error: reason + "; retrying",
                         duration: duration, in: &book)
                    operation.phase = .waitingToRetry
                    // The delay doubles per attempt, up to the longest duration a file may give: the exponent is
                    // bounded first, so that a zero delay stays zero rather than becoming 0 × ∞.
                    let doubling = pow(2, Double(min(attempt - 1, 64)))
                    return .retry(min(task.spec.retryDelay * doubling, DurationText.longestSeconds))
                }
                // Contract: a failure `retry_on` does not list fails the task at once, and says why
                // (docs/pipeline.md, "Retries").
                result = .failed(exitCode: exitCode, reason: reason + "; " + Self.notRetried(cause: cause, exitCode: exitCode, spec: task.spec),
                                 cause: cause)
            }
            operation.result = result
            // Contract: completion hooks run once the terminal state is known, before dependents go on.
            let hook = result.isSuccess || operation.isStoppedService ? task.spec.onSuccess : task.spec.onFailure
            if let hook, !stopped, let command = try? hook.rendered(in: (try? resolver.get())?.context(for: task, attempt: attempt)
                ?? TemplateContext(variables: [:]), as: .shellQuoted) {  // the loader checked the template's names
                operation.phase = .completing
                return .hook(command)
            }
            // Completed under the same lock: one lock per attempt's end.
            return .complete(completion(of: operation, in: &book))
        }
        switch next {
        case .retry(let delay):
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in self?.retry(operation, after: attempt) }
        case .hook(let command):
            Task { [self] in
                let hookSucceeded = await runCommand(command, for: task, attempt: attempt)
                let step = state.withLock { book in
                    if !hookSucceeded {
                        book.hookFailures.append(RunSummary.FailedTask(
                            id: task.id, exitCode: nil, reason: "its completion hook `\(command)` failed", allowed: false,
                            logPath: (try? resolver.get())?.logPath(for: task.id) ?? "", lastLines: []))
                    }
                    return completion(of: operation, in: &book)
                }
                perform(step)
            }
        case .complete(let step):
            perform(step)
        }
    }

    /// Why a failure was not retried: `not retried: retry_on [timeout] does not list exit code 3`.
    static func notRetried(cause: FailureCause?, exitCode: Int32?, spec: TaskSpec) -> String {
        let what = cause.map { $0.rawValue } ?? exitCode.map { "exit code \($0)" } ?? "a failure of no known cause"
        let listed = (spec.retryOn ?? []).map(\.text).joined(separator: ", ")
        return "not retried: retry_on [\(listed)] does not list \(what)"
    }

    /// Records a task's final result in the Plan under the lock the caller holds: the step to perform after it.
    func completion(of operation: TaskOperation, in book: inout RunBook) -> Step {
        let index = operation.index
        let duration = (clock.now - operation.attemptStarted).inSeconds
        let result = operation.result ?? .succeeded
        let stoppedByUs = book.stop != nil && operation.isTerminated
        let outcome: Plan.Outcome
        var exitCode: Int32? = 0
        var error: String?
        let needers = book.plan.remainingNeeders(of: index)
        switch (operation.outcomeWithoutRunning, result) {
        case (let settled?, _):
            outcome = settled
            exitCode = nil
        case (nil, .succeeded) where operation.task.spec.service != nil && needers > 0 && book.stop == nil && !operation.isStoppedService:
            // Contract: a service that dies early fails what still needs it, whatever its exit status.
            outcome = .failed
            let reason = "the service ended while \(String(counting: needers, "task")) still need\(needers == 1 ? "s" : "") it"
            book.failures[index] = RunBook.Failure(exitCode: 0, reason: reason, hasLog: operation.isHandedToExecutor)
            error = reason
        case (nil, .succeeded):
            outcome = .succeeded
            storeInCache(operation)
        case (nil, .failed(let code, _, _)) where operation.isStoppedService && !stoppedByUs:
            // A service stopped because nothing needs it any more ended as planned; one that was running
            // when a signal stopped the run is cancelled like every other task, whichever stop came first.
            outcome = .succeeded
            exitCode = code
        case (nil, .failed(let code, var reason, _)):
            outcome = stoppedByUs ? .cancelled : .failed
            // A service not ready in time was terminated by the runner: say why, not how its process ended.
            if operation.isNotReady { reason = Self.notReadyReason(operation.task) }
            if !stoppedByUs { book.failures[index] = RunBook.Failure(exitCode: code, reason: reason, hasLog: operation.isHandedToExecutor) }
            exitCode = code
            error = reason
        }
        book.ended[index] = elapsed()
        let from = book.plan.states[index]
        let transitions = book.plan.record(index, outcome)
        guard let own = transitions.first else { return nextStep(after: [], in: &book) }
        emit(index, from: from, to: own.to, exitCode: exitCode, error: error, duration: duration, in: &book)
        // Queued with the event, under the lock: by the time an observer shows the end, the row is there
        // for its flush (see `ObserverHub.drain`); queued later, a kill right after could lose it.
        let ran = operation.outcomeWithoutRunning == nil
        history?.ended(operation.task.id, state: own.to, attempts: ran ? operation.attempt : 0,
                       duration: ran ? duration : nil, exitCode: exitCode, answer: operation.answer)
        rememberCacheKey(of: index, in: &book)
        // Its last use: held to the end of the run, an answer per task (with its definition's canonical
        // text) made the run's memory grow with every task that ended.
        operation.answer = nil
        let rest = Array(transitions.dropFirst())
        emit(rest, in: &book)
        return nextStep(after: rest, ended: index, in: &book)
    }

    /// Starts the next attempt of a task whose retry was pending, once the Plan gives it what the attempt
    /// holds (`retry_scale` may ask more: it may wait for room, and `nextStep` starts it then), or ends it
    /// cancelled when the run is stopping; does nothing when the retry was taken already (by a stop, or by
    /// the delay's timer).
    func retry(_ operation: TaskOperation, after attempt: Int) {
        enum Next { case taken, cancelled, start(RetryStart?, Step) }
        let next = state.withLock { book -> Next in
            guard operation.phase == .waitingToRetry, operation.attempt == attempt else { return .taken }
            guard book.stop == nil else {
                operation.phase = .starting
                operation.isTerminated = true
                return .cancelled
            }
            // Its timer fired already; it waits for room.
            if operation.waitsForRoom { return .taken }
            let holding = limitedResources.holding(of: operation.task.spec, attempt: attempt + 1, jobs: configuration.jobs)
            operation.resourcesNote = holding.note
            let room = book.plan.retry(operation.index, holding: holding)
            if !room.holdsRoom { operation.waitsForRoom = true }
            let start = room.holdsRoom ? beginRetry(operation, in: &book) : nil
            // What the last attempt held is free again: a retry waiting for room (this one, once others
            // waiting before it let go of theirs) or a ready task may take it, and no task's end may come
            // to hand it over.
            return .start(start, room == .same ? Step() : nextStep(after: [], in: &book))
        }
        switch next {
        case .taken: break
        case .cancelled: attemptEnded(operation, attempt: attempt + 1, .failed(exitCode: nil, reason: "cancelled before retrying"))
        case .start(let start, let step):
            if let start { startRetry(operation, start) }
            perform(step)
        }
    }

    /// How a retry that holds its room goes on, decided under the lock.
    enum RetryStart {
        case launch(attempt: Int)
        case fail(attempt: Int, reason: String)
    }

    /// Under the lock: the next attempt of a task whose retry holds what it asks begins (its transition
    /// back into `executing`, with what it holds).
    func beginRetry(_ operation: TaskOperation, in book: inout RunBook) -> RetryStart {
        operation.phase = .starting
        operation.attempt += 1
        operation.attemptStarted = clock.now
        emit(operation.index, from: .failed, to: .executing, in: &book)
        operation.resourcesNote = nil
        if let setupFailure = operation.setupFailure { return .fail(attempt: operation.attempt, reason: setupFailure) }
        return .launch(attempt: operation.attempt)
    }

    /// Outside the lock: hands a begun retry to the executor.
    func startRetry(_ operation: TaskOperation, _ start: RetryStart) {
        switch start {
        case .launch(let attempt): launch(operation, attempt: attempt)
        case .fail(let attempt, let reason): attemptEnded(operation, attempt: attempt, .failed(exitCode: nil, reason: reason))
        }
    }
}
