import Dispatch
import Foundation
import JobGraphBasics
import PipelineModel
import TaskGraph

/// One task's life: its check, its attempts, its retries and its end.
extension Runner {
    // MARK: - One task's life

    /// Called by a task's operation when it is started, on the thread that learnt it may start: often the
    /// event loop's, which must not block.
    func begin(_ index: Int) {
        let (attempt, task, decided, setupFailure) = state.withLock { book in
            book.attemptStarted[index] = clock.now
            if book.firstStarted[index] == nil { book.firstStarted[index] = elapsed() }
            return (book.attempts[index], book.tasks[index], book.answers[index], book.executorSetupFailure)
        }
        // An executor that could not be set up for the run (a refused allocation) fails every attempt with why.
        if let setupFailure {
            attemptEnded(index, attempt: attempt, .failed(exitCode: nil, reason: setupFailure))
            return
        }
        // Resolved once: the up-to-date check and the executor take the same work.
        let work = Result { () throws -> TaskWork in try resolver.get().work(for: task, attempt: attempt) }
        guard attempt == 1, let history, case .success(let resolved) = work else {
            launch(index, task, attempt: attempt, work: work)
            return
        }
        // A task checked before the run (its needs were all up to date) is not checked again; its start is
        // recorded here unless that commits (the withdrawal of a success it had).
        if let decided, !history.startCommits(answer: decided) {
            start(index, task: task, work: resolved, answer: decided, isKept: true, history: history)
            return
        }
        // The check reads the store and hashes every input whose status changed (a 1 GB input takes
        // seconds), and the start's record may commit: on a worker, so that every other task's output and
        // exit go on meanwhile. It then carries the start on from there, as the loop's thread would have.
        checks[index % checks.count].async { [self] in
            guard let answer = decided ?? check(task, work: resolved, with: history) else {
                launch(index, task, attempt: attempt, work: work)
                return
            }
            start(index, task: task, work: resolved, answer: answer, isKept: decided != nil, history: history)
        }
    }

    /// Ends a first attempt found up to date, or records its start and launches it.
    /// - Parameter isKept: `answer` is the one the run keeps for the task already (from the pass before it).
    private func start(_ index: Int, task: RunTask, work: TaskWork, answer: UpToDateAnswer, isKept: Bool,
                       history: any TaskHistory) {
        let isUpToDate = answer.isUpToDate && !configuration.force
        if isUpToDate {
            let step = state.withLock { book in
                book.answers[index] = answer
                book.upToDate.insert(index)
                return completion(of: index, in: &book)
            }
            perform(step)
            return
        }
        if !isKept { state.withLock { $0.answers[index] = answer } }
        history.started(task.id, answer: answer)
        launch(index, task, attempt: 1, work: .success(work))
    }

    /// The up-to-date answer for a task about to run; `nil` when its paths cannot be rendered (the attempt
    /// then fails with that error).
    func check(_ task: RunTask, work: TaskWork, with history: any TaskHistory) -> UpToDateAnswer? {
        guard let resolver = try? resolver.get(), let paths = try? resolver.declaredPaths(for: task) else { return nil }
        return history.check(work, inputs: paths.inputs, outputs: paths.outputs, environmentNames: resolver.environmentNames(for: task))
    }

    func launch(_ index: Int, _ task: RunTask, attempt: Int, work: Result<TaskWork, any Error>? = nil) {
        let events = self.events
        let id = task.id
        var reporter = TaskReporter(
            output: { line in events.yield(.output(task: id, line: line)) },
            progress: { bytes, total in events.yield(.progress(task: id, bytes: bytes, total: total)) },
            finished: { [weak self] result in self?.attemptEnded(index, attempt: attempt, result) })
        reporter.executorJob = { [weak self] job in
            self?.state.withLock { book in
                book.executorJobs[index] = job
                book.executorStates[index] = nil  // an earlier attempt's
            }
        }
        reporter.executorState = { [weak self] slurmState in self?.state.withLock { $0.executorStates[index] = slurmState } }
        reporter.interruptsRun = { [weak self] in self?.control(.interrupt) }
        do {
            let work = try (work ?? Result { () throws -> TaskWork in try resolver.get().work(for: task, attempt: attempt) }).get()
            let handle = try executor.start(work, reporter: reporter)
            let stopNow = state.withLock { book -> Bool in
                book.handedToExecutor.insert(index)
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

    func attemptEnded(_ index: Int, attempt: Int, _ result: TaskResult) {
        enum Next { case retry(Double), hook(String, RunTask), complete(Step) }
        let next = state.withLock { book -> Next in
            var result = result
            let task = book.tasks[index]
            book.executions[index] = nil
            book.endedAttempt[index] = attempt
            let stopped = book.stop != nil && book.terminated.contains(index)
            if case .failed(let exitCode, let reason, let cause) = result, attempt <= task.spec.retries, book.stop == nil,
               task.spec.service == nil {
                if task.spec.allowsRetry(cause: cause, exitCode: exitCode) {
                    let duration = book.attemptStarted[index].map { (clock.now - $0).inSeconds }
                    emit(index, from: .executing, to: .failed, exitCode: exitCode, error: reason + "; retrying", duration: duration, in: &book)
                    book.pendingRetries[index] = attempt
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
            book.results[index] = result
            // Contract: completion hooks run once the terminal state is known, before dependents go on.
            let hook = result.isSuccess || book.stoppedServices.contains(index) ? task.spec.onSuccess : task.spec.onFailure
            if let hook, !stopped, let command = try? hook.rendered(in: (try? resolver.get())?.context(for: task, attempt: attempt)
                ?? TemplateContext(variables: [:]), as: .shellQuoted) {  // the loader checked the template's names
                return .hook(command, task)
            }
            // Completed under the same lock: one lock less per task.
            return .complete(completion(of: index, in: &book))
        }
        switch next {
        case .retry(let delay):
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in self?.retry(index, after: attempt) }
        case .hook(let command, let task):
            Task { [self] in
                let hookSucceeded = await runCommand(command, for: task, attempt: attempt)
                if !hookSucceeded {
                    state.withLock { book in
                        book.hookFailures.append(RunSummary.FailedTask(
                            id: task.id, exitCode: nil, reason: "its completion hook `\(command)` failed", allowed: false,
                            logPath: (try? resolver.get())?.logPath(for: task.id) ?? "", lastLines: []))
                    }
                }
                complete(index)
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

    /// Records a task's final result in the Plan and moves the run on.
    func complete(_ index: Int) {
        perform(state.withLock { book in completion(of: index, in: &book) })
    }

    /// `complete`'s work under the lock, for a caller that holds it already: the step to perform after it.
    func completion(of index: Int, in book: inout RunBook) -> Step {
        let duration = book.attemptStarted[index].map { (clock.now - $0).inSeconds }
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
        case .failed(let code, _, _) where book.stoppedServices.contains(index) && !(book.stop != nil && book.terminated.contains(index)):
            // A service stopped because nothing needs it any more ended as planned; one that was running
            // when a signal stopped the run is cancelled like every other task, whichever stop came first.
            outcome = .succeeded
            exitCode = code
        case .failed(let code, var reason, _):
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
        // Queued with the event, under the lock: by the time an observer shows the end, the row is there
        // for its flush (see `ObserverHub.drain`); queued later, a kill right after could lose it.
        history?.ended(book.tasks[index].id, state: own.to, attempts: own.to == .upToDate ? 0 : book.attempts[index],
                       duration: own.to == .upToDate ? nil : duration, exitCode: exitCode, answer: book.answers[index])
        // Its last use: held to the end of the run, an answer per task (with its definition's canonical
        // text) made the run's memory grow with every task that ended.
        book.answers[index] = nil
        let rest = Array(transitions.dropFirst())
        emit(rest, in: &book)
        return nextStep(after: rest, ended: index, in: &book)
    }

    /// Starts the next attempt of a task whose retry was pending, or ends it cancelled when the run is
    /// stopping; does nothing when the retry was taken already (by a stop, or by the delay's timer).
    func retry(_ index: Int, after attempt: Int) {
        enum Next { case taken, cancelled, failed(String), launch(RunTask) }
        let next = state.withLock { book -> Next in
            guard book.pendingRetries.removeValue(forKey: index) == attempt else { return .taken }
            guard book.stop == nil else {
                book.terminated.insert(index)
                return .cancelled
            }
            book.attempts[index] = attempt + 1
            book.attemptStarted[index] = clock.now
            emit(index, from: .failed, to: .executing, in: &book)
            if let setupFailure = book.executorSetupFailure { return .failed(setupFailure) }
            return .launch(book.tasks[index])
        }
        switch next {
        case .taken: break
        case .cancelled: attemptEnded(index, attempt: attempt + 1, .failed(exitCode: nil, reason: "cancelled before retrying"))
        case .failed(let reason): attemptEnded(index, attempt: attempt + 1, .failed(exitCode: nil, reason: reason))
        case .launch(let task): launch(index, task, attempt: attempt + 1)
        }
    }
}
