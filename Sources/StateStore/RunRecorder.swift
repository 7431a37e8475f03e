import Execution
import Foundation
import JobGraphBasics
import PipelineModel

/// One run's link to the state store: the Runner's `TaskHistory`.
///
/// Rows go to a `HistoryWriter`, which commits them in order on its own thread, many to a transaction.
/// Only the withdrawal of a trusted success before its task executes waits for its commit (or a kill
/// midway would leave half-written outputs looking up to date). A kill loses at most rows that cost
/// nothing: starts, ends whose task then runs again, and up-to-date verdicts the next run reaches again.
///
/// A failure to read or write the store never fails a task: it is kept and reported once by `finish`.
public final class RunRecorder: TaskHistory {
    private let store: StateStore
    /// The run this records into.
    public let run: RunID
    private let pipelineDirectory: String
    private let problems = Locked<[String]>([])
    private let writer: HistoryWriter

    /// What `check` hands the Runner, for `started` and `ended` to use.
    private struct CheckedTask: Sendable {
        var fingerprints: TaskFingerprints
        var hasTrustedSuccess: Bool
    }

    /// Starts a run's record.
    /// - Parameters:
    ///   - pipelineFile: the path as the user typed it, which names the pipeline in the history.
    ///   - pipelineDirectory: absolute; recorded paths are relative to it.
    public init(store: StateStore, pipelineFile: String, pipelineDirectory: String, taskCount: Int, startTime: Date) throws {
        self.store = store
        self.pipelineDirectory = pipelineDirectory
        let run = try store.beginRun(pipelineFile: pipelineFile, startTime: startTime, taskCount: taskCount)
        self.run = run
        let problems = self.problems
        writer = HistoryWriter { rows in
            do { try store.record(rows, run: run) } catch {
                problems.withLock { $0.append("cannot record \(rows.count) rows of the run's history: \(error)") }
            }
        }
    }

    public func check(_ work: TaskWork, inputs: [String], outputs: [String], environmentNames: [String]) -> UpToDateAnswer {
        let definition = definition(of: work, inputs: inputs, outputs: outputs, environmentNames: environmentNames)
        do {
            return Self.answer(try store.checkUpToDate(work.id, definition: definition))
        } catch {
            note("cannot check whether '\(work.id)' is up to date: \(error)")
            return UpToDateAnswer(isUpToDate: false, reason: "the state store could not tell")
        }
    }

    public func makeBatchCheck() -> (any UpToDateBatchChecking)? {
        do {
            return BatchCheck(recorder: self, batch: try store.makeUpToDateBatch())
        } catch {
            note("cannot read the state store before the run: \(error)")
            return nil
        }
    }

    /// `check` for many tasks, reading the store once (see `UpToDateBatch`).
    private final class BatchCheck: UpToDateBatchChecking {
        let recorder: RunRecorder
        let batch: UpToDateBatch

        init(recorder: RunRecorder, batch: UpToDateBatch) {
            self.recorder = recorder
            self.batch = batch
        }

        func check(_ work: TaskWork, inputs: [String], outputs: [String], environmentNames: [String]) -> UpToDateAnswer {
            let definition = recorder.definition(of: work, inputs: inputs, outputs: outputs, environmentNames: environmentNames)
            return RunRecorder.answer(batch.check(work.id, definition: definition))
        }

        func finish() {
            do { try batch.finish() } catch { recorder.note("cannot record the files read before the run: \(error)") }
        }
    }

    fileprivate func definition(of work: TaskWork, inputs: [String], outputs: [String], environmentNames: [String]) -> TaskDefinition {
        TaskDefinition(work: work, environmentNames: environmentNames, inputs: inputs, outputs: outputs, pipelineDirectory: pipelineDirectory)
    }

    fileprivate static func answer(_ check: UpToDateCheck) -> UpToDateAnswer {
        UpToDateAnswer(isUpToDate: check.verdict.isUpToDate, reason: check.verdict.description,
                       fingerprints: CheckedTask(fingerprints: check.fingerprints, hasTrustedSuccess: check.hasTrustedSuccess))
    }

    public func started(_ task: TaskID, answer: UpToDateAnswer?) {
        // Without a check's answer, assume the worst: a success to withdraw.
        let hasTrustedSuccess = (answer?.fingerprints as? CheckedTask)?.hasTrustedSuccess ?? true
        writer.append(.started(task), waitUntilWritten: hasTrustedSuccess)
    }

    public func ended(_ task: TaskID, state: TaskState, attempts: Int, duration: Double?, exitCode: Int32?, answer: UpToDateAnswer?) {
        let fingerprints = (answer?.fingerprints as? CheckedTask)?.fingerprints
        let record = TaskRecord(task: task, state: state, attempts: attempts, duration: duration, exitCode: exitCode,
                                definition: fingerprints?.definition)
        writer.append(.ended(record, fingerprints: state == .succeeded ? fingerprints : nil), promptly: attempts > 0)
    }

    /// Closes the run's record; returns the problems met along the way, for the user to see.
    public func finish(_ summary: RunSummary, endTime: Date) -> [String] {
        writer.close()
        do { try store.finishRun(run, outcome: RunOutcome(summary: summary), endTime: endTime) } catch {
            note("cannot record the end of the run: \(error)")
        }
        return problems.withLock { $0 }
    }

    fileprivate func note(_ problem: String) {
        problems.withLock { $0.append(problem) }
    }
}
