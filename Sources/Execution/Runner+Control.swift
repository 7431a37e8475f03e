import Dispatch
import Foundation
import JobGraphBasics
import PipelineModel
import TaskGraph

/// Stopping, suspending and resuming a run from outside (signals).
extension Runner {
    /// Steers the run from outside: signals and their like. Safe from any thread.
    public func control(_ command: RunControl) {
        switch command {
        case .interrupt, .terminate:
            stop(command == .interrupt ? .interrupt : .terminate)
        case .suspend:
            state.withLock { book in
                // A stopping run starts only `always` and `failure` tasks, and those must run (contract).
                guard book.stop == nil, !book.isSuspended else { return }
                book.isSuspended = true
                events.yield(.suspended(true))
            }
        case .resume:
            let step = state.withLock { book -> Step? in
                guard book.isSuspended else { return nil }
                book.isSuspended = false
                events.yield(.suspended(false))
                return nextStep(after: [], in: &book)
            }
            guard let step else { return }
            perform(step)
        case .pauseProcesses:
            state.withLock { $0.handles }.forEach { $0.pause() }
        case .continueProcesses:
            state.withLock { $0.handles }.forEach { $0.resume() }
        }
    }

    func stop(_ reason: RunStop) {
        enum Action { case terminate([any TaskExecution], retries: [(TaskOperation, Int)], Step), kill([any TaskExecution]) }
        let action = state.withLock { book -> Action in
            book.stopRequests += 1
            let handles = book.handles
            guard book.stopRequests == 1 else { return .kill(handles) }
            book.stop = reason
            events.yield(.stopping(reason))
            // A stop lifts a suspension: `always` tasks still run (contract), and held ones would hang the run.
            if book.isSuspended {
                book.isSuspended = false
                events.yield(.suspended(false))
            }
            var retries: [(TaskOperation, Int)] = []
            for index in book.plan.states.indices where book.plan.states[index] == .executing {
                guard let operation = book.operations[index] else { continue }  // a fan-out: its items are stopped
                operation.isTerminated = true
                if operation.handle == nil { operation.terminatesOnStart = true }
                if operation.phase == .waitingToRetry { retries.append((operation, operation.attempt)) }
            }
            let transitions = book.plan.cancel()
            emit(transitions, in: &book)
            return .terminate(handles, retries: retries, nextStep(after: transitions, in: &book))
        }
        switch action {
        case .terminate(let handles, let retries, let step):
            // First the executor, so that it stops the run's work its own way (Slurm: every job in one
            // `scancel`, on its own thread), then each attempt.
            executor.cancel()
            handles.forEach { $0.terminate(grace: configuration.terminationGrace) }
            perform(step)
            // A retry waiting out its delay ends now, cancelled, instead of when its timer fires.
            for (operation, attempt) in retries { retry(operation, after: attempt) }
        case .kill(let handles):
            handles.forEach { $0.kill() }
        }
    }
}
