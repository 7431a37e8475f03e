import Execution
import Foundation
import JobGraphBasics
import PipelineModel

/// Keeps a run's attempts for `jobgraph report`: a `RunObserver` that gathers them from the transitions and
/// writes them in one transaction when the run finishes, so it costs the run nothing while it goes on. A
/// run killed outright (SIGKILL) loses its attempts, not its history rows.
///
/// Call only from the run's event stream.
public final class AttemptRecorder: RunObserver {
    private let store: StateStore
    private let run: RunID
    private var log: TaskAttemptLog
    private var jobs = 1
    private var resources: [ResourceTotal]?
    /// Told how many rows could not be written, and why: the run's `RunRecorder`, so the user hears of a
    /// failing history once, not once per writer.
    private let lost: (Int, any Error) -> Void

    /// Records into `run` of `store`, the run `RunRecorder` began.
    /// - Parameters:
    ///   - fanOuts: the dynamic fan-outs, which execute nothing themselves and so get no attempt.
    ///   - taskCount: the graph's tasks, for the log to reserve room for one attempt each.
    ///   - lost: told of attempts that could not be written (see `RunRecorder.noteLost`).
    public init(store: StateStore, run: RunID, fanOuts: Set<TaskID>, taskCount: Int = 0, lost: @escaping (Int, any Error) -> Void) {
        self.store = store
        self.run = run
        self.log = TaskAttemptLog(ignoring: fanOuts, expected: taskCount)
        self.lost = lost
    }

    /// The batch's transitions go to the log in one call, which passes over the checks that found their
    /// task up to date (`TaskAttemptLog.record(transitionsIn:)`); the other events come after them, as a
    /// batch ends with `.finished` when it holds one.
    public func observe(batch events: [RunEvent]) {
        log.record(transitionsIn: events)
        for event in events {
            if case .transition = event { continue }
            observe(event)
        }
    }

    public func observe(_ event: RunEvent) {
        switch event {
        case .started(let start):
            jobs = start.jobs
            resources = start.resources
        case .transition(let transition):
            log.record(transition)
        case .finished(let summary):
            for failure in summary.failures { log.attachLogTail(failure.lastLines, to: failure.id) }
            do {
                try store.recordAttempts(log.attempts, run: run, jobs: jobs, criticalPath: summary.criticalPath, resources: resources)
            } catch {
                lost(log.attempts.reduce(0) { count, _ in count + 1 }, error)
            }
        case .output, .progress, .suspended, .stopping, .executorWaiting:
            break
        }
    }
}
