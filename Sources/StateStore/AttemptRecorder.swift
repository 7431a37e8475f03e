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
    /// Told how many rows could not be written, and why: the run's `RunRecorder`, so the user hears of a
    /// failing history once, not once per writer.
    private let lost: (Int, any Error) -> Void

    /// Records into `run` of `store`, the run `RunRecorder` began.
    /// - Parameters:
    ///   - fanOuts: the dynamic fan-outs, which execute nothing themselves and so get no attempt.
    ///   - lost: told of attempts that could not be written (see `RunRecorder.noteLost`).
    public init(store: StateStore, run: RunID, fanOuts: Set<TaskID>, lost: @escaping (Int, any Error) -> Void) {
        self.store = store
        self.run = run
        self.log = TaskAttemptLog(ignoring: fanOuts)
        self.lost = lost
    }

    /// Passes over a check that found its task up to date (into `executing` and straight out to
    /// `up-to-date`): the log would open an attempt for it and drop it, leaving itself as it was. A no-op
    /// rerun's transitions are mostly such pairs, and each event cost about 1,400 instructions here
    /// (callgrind, checked no-op rerun of 10,000 tasks).
    public func observe(batch events: [RunEvent]) {
        var index = events.startIndex
        while index < events.endIndex {
            if index + 1 < events.endIndex, case .transition(let into) = events[index],
               case .transition(let out) = events[index + 1], TaskAttemptLog.isCheckOnly(into, then: out) {
                index += 2
                continue
            }
            observe(events[index])
            index += 1
        }
    }

    public func observe(_ event: RunEvent) {
        switch event {
        case .started(let start):
            jobs = start.jobs
        case .transition(let transition):
            log.record(transition)
        case .finished(let summary):
            for failure in summary.failures { log.attachLogTail(failure.lastLines, to: failure.id) }
            do {
                try store.recordAttempts(log.attempts, run: run, jobs: jobs, criticalPath: summary.criticalPath)
            } catch {
                lost(log.attempts.reduce(0) { count, _ in count + 1 }, error)
            }
        case .output, .progress, .suspended, .stopping:
            break
        }
    }
}
