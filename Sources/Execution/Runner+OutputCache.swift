import Dispatch
import PipelineModel

/// The output cache's part in a task's life (docs/cache.md): asked where the run decides that a task
/// runs, told of its success, waited for at the end.
extension Runner {
    /// For a `cache: true` task about to run: looks its key up and, on a hit, restores it and ends it
    /// `restored`; on a miss, launches it. Restoring is I/O, so on a worker. Under `--force` the key is
    /// kept, for the store after its success, and the task runs.
    /// - Parameter isKept: `answer` is the one the operation holds already (see `start`).
    /// - Returns: whether the cache took the task over (`false`: launch it as usual).
    func restoresFromCache(_ operation: TaskOperation, work: TaskWork, answer: UpToDateAnswer, isKept: Bool) -> Bool {
        let task = operation.task
        let index = operation.index
        // A task whose paths do not render was not checked either: it fails at its launch, with the error.
        guard let outputCache, task.spec.isCached, let resolver = try? resolver.get(),
              let paths = try? resolver.declaredPaths(for: task) else { return false }
        let needKeys = state.withLock { book in graph.dependencies[task.needsOf].map { cacheKey(of: Int($0), in: &book) } }
        guard let key = outputCache.key(for: task.spec, answer: answer, needKeys: needKeys) else { return false }
        let cached = CachedTask(id: task.id, key: key, workingDirectory: work.workingDirectory, outputs: paths.outputs, logPath: work.logPath)
        state.withLock { book in
            book.cacheKeys[index] = key
            operation.cacheEntry = cached
        }
        // `--force` runs every task (docs/cli.md); what succeeds is still stored.
        if configuration.force { return false }
        checks[index % checks.count].async { [self] in
            guard let hit = outputCache.restore(cached) else {
                launch(operation, attempt: 1, work: .success(work), answer: isKept ? nil : answer)
                return
            }
            for line in hit.logLines { events.yield(.output(task: task.id, line: line)) }
            perform(state.withLock { book in
                operation.answer = answer
                operation.cacheEntry = nil
                operation.restoredFrom = hit.origin
                operation.outcomeWithoutRunning = .restored
                return completion(of: operation, in: &book)
            })
        }
        return true
    }

    /// A need's key for its dependents' keys: the one it was looked up with, else made from its up-to-date
    /// answer; `nil` for a task that has neither (it was not checked).
    func cacheKey(of index: Int, in book: inout RunBook) -> String? {
        rememberCacheKey(of: index, in: &book)
        return book.cacheKeys[index]
    }

    /// Keeps a task's key while its answer is at hand (before the answer is dropped at its end), for the
    /// tasks that need it; its needs' keys are known by then.
    func rememberCacheKey(of index: Int, in book: inout RunBook) {
        guard let outputCache, book.cacheKeys[index] == nil, let answer = book.answer(index) else { return }
        let task = book.tasks[index]
        let needKeys = graph.dependencies[task.needsOf].map { cacheKey(of: Int($0), in: &book) }
        book.cacheKeys[index] = outputCache.key(for: task.spec, answer: answer, needKeys: needKeys)
    }

    /// After a looked-up task succeeded (under the runner's lock): stores its outputs and log on a worker;
    /// its dependents go on.
    func storeInCache(_ operation: TaskOperation) {
        guard let outputCache, let cached = operation.cacheEntry else { return }
        operation.cacheEntry = nil
        cacheStores.enter()
        checks[operation.index % checks.count].async { [cacheStores] in
            outputCache.store(cached)
            cacheStores.leave()
        }
    }

    /// Waits for the stores and the uploads still going on.
    func finishOutputCache() async {
        guard let outputCache else { return }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            cacheStores.notify(queue: .global()) { done.resume() }
        }
        await outputCache.finish()
    }
}
