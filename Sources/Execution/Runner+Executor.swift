import Dispatch
import JobGraphBasics

/// The run's life on its executor: set up before the first task, released after the last (see
/// `TaskExecutor`); a stop is passed on in `stop(_:)`.
extension Runner {
    /// Sets the executor up, on a worker thread: it may wait for a cluster, and must hold up neither the
    /// event loop's thread nor one of Swift's cooperative pool. A failure is kept: each attempt then fails
    /// with it, as an attempt the executor could not start does.
    func prepareExecutor() async {
        let executor = self.executor
        executor.reportWaiting { [events] text in events.yield(.executorWaiting(text)) }
        executor.reportLines(to: executorMessages)
        let outcome = await Self.onWorkerThread { () -> Result<[String], any Error> in Result { try executor.prepare() } }
        switch outcome {
        case .success(let lines):
            if !lines.isEmpty { executorMessages(lines) }
        case .failure(let error):
            state.withLock { $0.executorSetupFailure = String(describing: error) }
        }
    }

    /// Releases what the run held on the executor, on a worker thread (it may wait for the cluster).
    /// - Returns: the executor's lines for the summary.
    func finishExecutor() async -> [String] {
        let executor = self.executor
        return await Self.onWorkerThread { executor.finish() }
    }

    /// Runs `body`, which may block, on one of dispatch's worker threads, and waits for its result.
    static func onWorkerThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { (done: CheckedContinuation<Value, Never>) in
            DispatchQueue.global().async { done.resume(returning: body()) }
        }
    }
}
