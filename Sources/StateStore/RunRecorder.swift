import Execution
import Foundation
import JobGraphBasics
import PipelineModel

/// One run's link to the state store: the Runner's `TaskHistory`, writing one transaction per finished
/// task so that a kill at any moment leaves a database the next run trusts.
///
/// A failure to read or write the store never fails a task: it is kept and reported once by `finish`.
public final class RunRecorder: TaskHistory {
    private let store: StateStore
    private let run: RunID
    private let pipelineDirectory: String
    private let problems = Locked<[String]>([])
    /// Up-to-date tasks' rows not yet written: a no-op rerun would otherwise spend a transaction (and its
    /// file locks) on each task. Losing them to a kill costs nothing; the next run checks those tasks again.
    private let pendingUpToDate = Locked<[TaskRecord]>([])
    private static let upToDateBatchSize = 256

    /// Starts a run's record.
    /// - Parameters:
    ///   - pipelineFile: the path as the user typed it, which names the pipeline in the history.
    ///   - pipelineDirectory: absolute; recorded paths are relative to it.
    public init(store: StateStore, pipelineFile: String, pipelineDirectory: String, taskCount: Int, startTime: Date) throws {
        self.store = store
        self.pipelineDirectory = pipelineDirectory
        run = try store.beginRun(pipelineFile: pipelineFile, startTime: startTime, taskCount: taskCount)
    }

    public func check(_ work: TaskWork, inputs: [String], outputs: [String], environmentNames: [String]) -> UpToDateAnswer {
        let definition = TaskDefinition(work: work, environmentNames: environmentNames, inputs: inputs, outputs: outputs,
                                        pipelineDirectory: pipelineDirectory)
        do {
            let check = try store.checkUpToDate(work.id, definition: definition)
            return UpToDateAnswer(isUpToDate: check.verdict.isUpToDate, reason: check.verdict.description, fingerprints: check.fingerprints)
        } catch {
            note("cannot check whether '\(work.id)' is up to date: \(error)")
            return UpToDateAnswer(isUpToDate: false, reason: "the state store could not tell")
        }
    }

    public func started(_ task: TaskID) {
        do { try store.recordTaskStarted(task, run: run) } catch { note("cannot record the start of '\(task)': \(error)") }
    }

    public func ended(_ task: TaskID, state: TaskState, attempts: Int, duration: Double?, exitCode: Int32?, answer: UpToDateAnswer?) {
        let fingerprints = answer?.fingerprints as? TaskFingerprints
        let record = TaskRecord(task: task, state: state, attempts: attempts, duration: duration, exitCode: exitCode,
                                definition: fingerprints?.definition)
        if state == .upToDate {
            let batch = pendingUpToDate.withLock { pending -> [TaskRecord] in
                pending.append(record)
                guard pending.count >= Self.upToDateBatchSize else { return [] }
                defer { pending.removeAll(keepingCapacity: true) }
                return pending
            }
            write(batch)
            return
        }
        do {
            try store.recordTask(record, run: run, fingerprints: state == .succeeded || state == .upToDate ? fingerprints : nil)
        } catch {
            note("cannot record how '\(task)' ended: \(error)")
        }
    }

    /// Closes the run's record; returns the problems met along the way, for the user to see.
    public func finish(_ summary: RunSummary, endTime: Date) -> [String] {
        write(pendingUpToDate.withLock { pending in defer { pending = [] }; return pending })
        do { try store.finishRun(run, outcome: RunOutcome(summary: summary), endTime: endTime) } catch {
            note("cannot record the end of the run: \(error)")
        }
        return problems.withLock { $0 }
    }

    private func write(_ upToDate: [TaskRecord]) {
        guard !upToDate.isEmpty else { return }
        do { try store.recordTasks(upToDate, run: run) } catch { note("cannot record \(upToDate.count) up-to-date tasks: \(error)") }
    }

    private func note(_ problem: String) {
        problems.withLock { $0.append(problem) }
    }
}
