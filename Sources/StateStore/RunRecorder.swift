import Execution
import Foundation
import JobGraphBasics
import PipelineModel

/// One run's link to the state store: the Runner's `TaskHistory`.
///
/// Rows wait in order and go to the database together, in one transaction, with the next row that must
/// be durable before the run goes on: the withdrawal of a trusted success before its task executes (or a
/// kill midway would leave half-written outputs looking up to date), and each end of a task that ran.
/// So a no-op rerun or a run of untracked tasks spends one transaction per batch or per finished task, not
/// two per task, and a kill loses at most rows that cost nothing: starts, and up-to-date verdicts that the
/// next run reaches again.
///
/// A failure to read or write the store never fails a task: it is kept and reported once by `finish`.
public final class RunRecorder: TaskHistory {
    private let store: StateStore
    /// The run this records into.
    public let run: RunID
    private let pipelineDirectory: String
    private let problems = Locked<[String]>([])
    private let pending = Locked<[HistoryWrite]>([])
    private static let batchSize = 256

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
        run = try store.beginRun(pipelineFile: pipelineFile, startTime: startTime, taskCount: taskCount)
    }

    public func check(_ work: TaskWork, inputs: [String], outputs: [String], environmentNames: [String]) -> UpToDateAnswer {
        let definition = TaskDefinition(work: work, environmentNames: environmentNames, inputs: inputs, outputs: outputs,
                                        pipelineDirectory: pipelineDirectory)
        do {
            let check = try store.checkUpToDate(work.id, definition: definition)
            return UpToDateAnswer(isUpToDate: check.verdict.isUpToDate, reason: check.verdict.description,
                                  fingerprints: CheckedTask(fingerprints: check.fingerprints, hasTrustedSuccess: check.hasTrustedSuccess))
        } catch {
            note("cannot check whether '\(work.id)' is up to date: \(error)")
            return UpToDateAnswer(isUpToDate: false, reason: "the state store could not tell")
        }
    }

    public func started(_ task: TaskID, answer: UpToDateAnswer?) {
        // Without a check's answer, assume the worst: a success to withdraw.
        let hasTrustedSuccess = (answer?.fingerprints as? CheckedTask)?.hasTrustedSuccess ?? true
        append(.started(task), writeNow: hasTrustedSuccess)
    }

    public func ended(_ task: TaskID, state: TaskState, attempts: Int, duration: Double?, exitCode: Int32?, answer: UpToDateAnswer?) {
        let fingerprints = (answer?.fingerprints as? CheckedTask)?.fingerprints
        let record = TaskRecord(task: task, state: state, attempts: attempts, duration: duration, exitCode: exitCode,
                                definition: fingerprints?.definition)
        append(.ended(record, fingerprints: state == .succeeded ? fingerprints : nil), writeNow: state != .upToDate)
    }

    /// Closes the run's record; returns the problems met along the way, for the user to see.
    public func finish(_ summary: RunSummary, endTime: Date) -> [String] {
        pending.withLock { pending in write(&pending) }
        do { try store.finishRun(run, outcome: RunOutcome(summary: summary), endTime: endTime) } catch {
            note("cannot record the end of the run: \(error)")
        }
        return problems.withLock { $0 }
    }

    private func append(_ row: HistoryWrite, writeNow: Bool) {
        // Written under the same lock that orders the rows, so a task's start never lands after its end.
        pending.withLock { pending in
            pending.append(row)
            if writeNow || pending.count >= Self.batchSize { write(&pending) }
        }
    }

    private func write(_ rows: inout [HistoryWrite]) {
        guard !rows.isEmpty else { return }
        do { try store.record(rows, run: run) } catch { note("cannot record \(rows.count) rows of the run's history: \(error)") }
        rows.removeAll(keepingCapacity: true)
    }

    private func note(_ problem: String) {
        problems.withLock { $0.append(problem) }
    }
}
