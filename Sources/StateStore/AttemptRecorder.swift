import Execution
import Foundation
import JobGraphBasics
import PipelineModel

/// Keeps a run's attempts for `jobgraph report`: a `RunObserver` that gathers them from the transitions and
/// writes them in one transaction when the run finishes, so it costs the run nothing while it goes on. A
/// run killed outright (SIGKILL) loses its attempts, not its history rows.
///
/// Call only from the run's event stream; keep `problems` (safe from any thread) to read after it ends.
public final class AttemptRecorder: RunObserver {
    private let store: StateStore
    private let run: RunID
    private var log: TaskAttemptLog
    private var jobs = 1
    /// What went wrong writing the attempts, for the user to see as warnings.
    public let problems = Locked<[String]>([])

    /// Records into `run` of `store`, the run `RunRecorder` began.
    /// - Parameter fanOuts: the dynamic fan-outs, which execute nothing themselves and so get no attempt.
    public init(store: StateStore, run: RunID, fanOuts: Set<TaskID>) {
        self.store = store
        self.run = run
        self.log = TaskAttemptLog(ignoring: fanOuts)
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
                problems.withLock { $0.append("cannot record the run's attempts for its report: \(error)") }
            }
        case .output, .progress, .suspended, .stopping:
            break
        }
    }
}
