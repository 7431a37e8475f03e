import Dispatch
import Foundation
import JobGraphBasics
import PipelineModel
import TaskGraph

/// The work the Plan asks of the runner: conditions, dynamic fan-outs, services, hooks.
extension Runner {
    // MARK: - Work the Plan asks for

    /// Checks a waiting task's conditions in order, stopping at the first unmet one.
    func checkConditions(of index: Int) async {
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

    /// Reads a dynamic fan-out's items and adds them to the run; each gets its operation when it starts.
    func expand(_ group: Int) {
        let task = state.withLock { $0.tasks[group] }
        var items: [ItemValue] = []
        var failure: String?
        do {
            let resolver = try resolver.get()
            guard let list = try resolver.fanOutList(for: task) else { throw FanOutItems.ReadError(description: "not a fan-out") }
            items = try FanOutItems.read(list.path, shownAs: list.shown)
        } catch {
            failure = "\(error)"
        }
        let step = state.withLock { book -> Step in
            if let failure {
                book.failures[group] = RunBook.Failure(exitCode: nil, reason: failure, hasLog: false)
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
            var itemNeeds = RunItemNeeds(graph: graph, listed: book.listedItems, group: group, first: book.plan.tasks.count, itemCount: items.count)
            var resolved = Plan.ItemNeeds()
            let hasItemNeeds = graph.nodes[group].hasItemNeeds
            var listLocation = groupTask.spec.location
            if case .file(let source)? = groupTask.spec.foreach { listLocation = source.location }
            let planItems = items.indices.map { number in
                var item = book.plan.tasks[group]
                item.id = groupTask.id.item(String(number))
                item.isFanOut = false
                item.hasConditions = groupTask.spec.conditions.contains(where: \.usesItem)
                item.needs = []
                if hasItemNeeds {
                    switch itemNeeds.needs(ofItem: ForeachItem(items[number], index: number, location: listLocation), id: item.id) {
                    case .success(let needs): item.needs = needs
                    case .failure(let failure):
                        resolved.unresolvedItems.insert(number)
                        book.unresolvedNeeds[itemNeeds.first + number] = failure.reason
                    }
                }
                return item
            }
            // The items known before the run whose per-item needs name this list's items: given them now.
            for waiter in book.plan.listWaiters(of: group) where waiter < graph.nodes.count && !graph.nodes[waiter].isDynamicFanOut {
                switch itemNeeds.needs(ofWaiter: waiter) {
                case .success(let needs): resolved.waiterNeeds[waiter] = needs
                case .failure(let failure):
                    resolved.unresolvedWaiters.insert(waiter)
                    book.unresolvedNeeds[waiter] = failure.reason
                }
            }
            let (added, transitions) = book.plan.expand(group, items: planItems, resolved: resolved)
            book.listedItems[group] = added
            for number in 0..<added.count {
                book.append(RunTask(item: items[number], number: number, of: groupTask))
            }
            emit(transitions, in: &book)
            return nextStep(after: transitions, in: &book)
        }
        perform(step)
    }

    /// Waits until a service is ready, then lets its dependents go; not ready in time fails it.
    func watchReadiness(of operation: TaskOperation, service: ServiceSpec, handle: any TaskExecution) {
        let index = operation.index, task = operation.task
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
                state.withLock { _ in operation.isNotReady = true }
                handle.terminate(grace: configuration.terminationGrace)
                return
            }
            let step = state.withLock { book in
                book.serviceReadyAt[index] = elapsed()
                let transitions = book.plan.serviceReady(index)
                emit(transitions, in: &book)
                return nextStep(after: transitions, in: &book)
            }
            perform(step)
        }
    }

    /// Runs a shell command for a task (a hook or a condition) through the executor; true on success.
    /// - Parameter attempt: the task's attempt it follows (a hook's is the last), for `JOBGRAPH_ATTEMPT`.
    func runCommand(_ command: String, for task: RunTask, attempt: Int = 1) async -> Bool {
        guard let work = try? resolver.get().commandWork(command, for: task, attempt: attempt) else { return false }
        return await run(work)
    }

    /// Runs a command's work through the executor, its output shown under the work's id; true on success.
    private func run(_ work: TaskWork) async -> Bool {
        let events = self.events
        let id = work.id
        return await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            let reporter = TaskReporter(output: { line in events.yield(.output(task: id, line: line)) },
                                        finished: { result in done.resume(returning: result.isSuccess) })
            do {
                _ = try executor.start(work, reporter: reporter)
            } catch {
                done.resume(returning: false)
            }
        }
    }

    /// The pipeline's own `on_success` / `on_failure`, once every task has ended.
    func runPipelineHook() async {
        let failed = state.withLock { book in !book.failures.isEmpty || book.stop != nil }
        guard let hook = PipelineHook(of: graph.pipeline, runFailed: failed), let resolver = try? resolver.get() else { return }
        if await !run(resolver.hookWork(hook)) {
            state.withLock { book in
                book.hookFailures.append(RunSummary.FailedTask(
                    id: hook.id, exitCode: nil, reason: "the pipeline's hook `\(hook.command)` failed", allowed: false,
                    logPath: resolver.logPath(for: hook.id), lastLines: []))
            }
        }
    }
}
