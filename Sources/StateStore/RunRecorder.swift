import Execution
import Foundation
import JobGraphBasics
import PipelineModel

/// One run's link to the state store: the Runner's `TaskHistory`.
///
/// Rows go to a `HistoryWriter`, which commits them in order on its own thread, many to a transaction.
/// Only the withdrawal of a trusted success before its task executes is committed at once, on the
/// caller's thread (or a kill midway would leave half-written outputs looking up to date). A kill loses
/// at most rows that cost nothing: starts, ends whose task then runs again, and up-to-date verdicts the
/// next run reaches again.
///
/// A failure to read or write the store never fails a task: it is kept and reported once by `finish`.
public final class RunRecorder: TaskHistory {
    private let store: StateStore
    /// The run this records into.
    public let run: RunID
    private let pipelineDirectory: String
    private let problems = Locked<[String]>([])
    /// History rows that could not be written, counted per cause: a full disk is one warning, not one per batch.
    private let lostHistory = Locked<[(cause: String, rows: Int)]>([])
    private let writer: HistoryWriter

    /// What `check` hands the Runner, for `started` and `ended` to use.
    struct CheckedTask: Sendable {
        var fingerprints: TaskFingerprints
        var hasTrustedSuccess: Bool
    }

    /// What `check` hands the Runner for an untracked task: always out of date, so nothing in the store
    /// is read; its definition is kept for the history row, hashed when the row is written.
    struct UntrackedTask: Sendable {
        var definition: TaskDefinition
    }

    /// The variable by which a run tells its tasks' processes its number in the history, so that a run
    /// nested in it says whose it is.
    public static let runVariable = "JOBGRAPH_RUN"

    /// Starts a run's record.
    /// - Parameters:
    ///   - pipelineFile: the path as the user typed it, which names the pipeline in the history.
    ///   - pipelineDirectory: absolute; recorded paths are relative to it.
    ///   - isNested: the run goes on under the lock of the run that started it (`RunLock.isNested`).
    ///   - environment: this process's, where `runVariable` names that run.
    public init(store: StateStore, pipelineFile: String, pipelineDirectory: String, taskCount: Int, startTime: Date,
                isNested: Bool = false, environment: [String: String] = [:]) throws {
        self.store = store
        self.pipelineDirectory = pipelineDirectory
        let run = try store.beginRun(pipelineFile: pipelineFile, startTime: startTime, taskCount: taskCount, dropsOldRuns: false,
                                     isNested: isNested, nestedIn: environment[Self.runVariable].flatMap(Int64.init).map(RunID.init))
        self.run = run
        let lostHistory = self.lostHistory
        writer = HistoryWriter { rows in
            do { try store.record(rows, run: run) } catch {
                let lost = rows.count { if case .dropOldRuns = $0 { false } else { true } }  // task rows only
                Self.note(lost, lostTo: error, in: lostHistory)
            }
        }
        // On the history thread, beside the up-to-date pass: once 50 runs are kept, each run deletes the
        // oldest one's rows, 150 M instructions for 10,000 tasks (callgrind), which held up the run's start.
        // A kill before it commits leaves the old run until the next run; nobody needs it gone sooner.
        writer.append(.dropOldRuns(pipelineFile: pipelineFile), flushed: false, promptly: true)
    }

    /// Notes rows of this run's history that another writer (the attempts for the report) could not
    /// store: they are told with the rest, one warning per cause.
    public func noteLost(_ rows: Int, to error: any Error) {
        Self.note(rows, lostTo: error, in: lostHistory)
    }

    private static func note(_ rows: Int, lostTo error: any Error, in lostHistory: Locked<[(cause: String, rows: Int)]>) {
        let cause = cause(of: error)
        lostHistory.withLock { lost in
            if let index = lost.firstIndex(where: { $0.cause == cause }) { lost[index].rows += rows } else { lost.append((cause, rows)) }
        }
    }

    public func check(_ work: TaskWork, inputs: [String], outputs: [String], environmentNames: [String]) -> UpToDateAnswer {
        let definition = definition(of: work, inputs: inputs, outputs: outputs, environmentNames: environmentNames)
        if let untracked = Self.untrackedAnswer(definition) { return untracked }
        do {
            return Self.answer(try store.checkUpToDate(work.id, definition: definition))
        } catch {
            note("cannot check whether '\(work.id)' is up to date: \(error)")
            return UpToDateAnswer(.historyUnavailable)
        }
    }

    /// A task that declares no paths is answered from its definition alone (`untrackedAnswer`).
    public func checkReads(inputs: [String], outputs: [String]) -> Bool {
        !TaskDefinition.isUntracked(inputs: inputs, outputs: outputs)
    }

    public func makeBatchCheck() -> (any UpToDateBatchChecking)? {
        do {
            return try StoreBatchCheck(store: store, pipelineDirectory: pipelineDirectory) { [weak self] problem in self?.note(problem) }
        } catch {
            note("cannot read the state store before the run: \(error)")
            return nil
        }
    }

    private func definition(of work: TaskWork, inputs: [String], outputs: [String], environmentNames: [String]) -> TaskDefinition {
        TaskDefinition(work: work, environmentNames: environmentNames, inputs: inputs, outputs: outputs, pipelineDirectory: pipelineDirectory)
    }

    /// The answer for a task that declares no paths (`StateStore.untrackedCheck`'s verdict, its definition
    /// not yet hashed); `nil` for a tracked one.
    static func untrackedAnswer(_ definition: TaskDefinition) -> UpToDateAnswer? {
        guard definition.isUntracked else { return nil }
        return UpToDateAnswer(.untracked, fingerprints: UntrackedTask(definition: definition))
    }

    /// The Runner's answer for a check, carrying what `started` and `ended` need.
    static func answer(_ check: UpToDateCheck) -> UpToDateAnswer {
        UpToDateAnswer(check.verdict.cause,
                       fingerprints: CheckedTask(fingerprints: check.fingerprints, hasTrustedSuccess: check.hasTrustedSuccess))
    }

    /// The definition fingerprint and input hashes an answer of `check` carries, which the output cache
    /// keys on; `nil` for an answer that carries none.
    public static func fingerprints(in answer: UpToDateAnswer) -> TaskFingerprints? {
        if let checked = answer.fingerprints as? CheckedTask { return checked.fingerprints }
        if let untracked = answer.fingerprints as? UntrackedTask {
            return TaskFingerprints(definition: untracked.definition.fingerprint, inputs: [])
        }
        return nil
    }

    /// Whether the task's last success is trusted, so that its start must withdraw it. Without a check's
    /// answer, assume the worst. An untracked task's check reads no success (as `StateStore.untrackedCheck`);
    /// its end withdraws any.
    private static func hasTrustedSuccess(_ answer: UpToDateAnswer?) -> Bool {
        answer?.fingerprints is UntrackedTask ? false : (answer?.fingerprints as? CheckedTask)?.hasTrustedSuccess ?? true
    }

    public func startCommits(answer: UpToDateAnswer?) -> Bool {
        Self.hasTrustedSuccess(answer)
    }

    public func started(_ task: TaskID, answer: UpToDateAnswer?) {
        let hasTrustedSuccess = Self.hasTrustedSuccess(answer)
        if hasTrustedSuccess {
            // Withdrawn here, in a statement of its own, before the task executes. Waiting instead for the
            // writer to commit it with every row queued before it cost about 200 µs a task: a rebuild of
            // 10,000 tasks whose outputs were deleted took 8.1 s, 6.1 s without the waits (farm-bench).
            // Those rows may now commit after it; a kill loses them as it could before: ends whose task
            // then runs again.
            do {
                try store.withdrawSuccess(of: task)
                writer.append(.started(task))
                return
            } catch {
                // The writer tries again with the history row, and the task waits for that as before.
            }
        }
        writer.append(.started(task), waitUntilWritten: hasTrustedSuccess)
    }

    public func ended(_ task: TaskID, state: TaskState, attempts: Int, duration: Double?, exitCode: Int32?, answer: UpToDateAnswer?) {
        // The answer's fingerprints taken out once and cast once for a checked task, the usual kind: reading
        // `answer?.fingerprints` for each question copied the answer five times and cast it twice, a third
        // of this call's 3,400 instructions (callgrind, checked no-op rerun of 10,000 tasks).
        let fingerprints = answer?.fingerprints
        let checked = fingerprints as? CheckedTask
        if checked == nil, let untracked = fingerprints as? UntrackedTask {
            let record = TaskRecord(task: task, state: state, attempts: attempts, duration: duration, exitCode: exitCode)
            writer.append(.endedUntracked(record, definition: untracked.definition), flushed: state != .upToDate)
            return
        }
        let record = TaskRecord(task: task, state: state, attempts: attempts, duration: duration, exitCode: exitCode,
                                definition: checked?.fingerprints.definition)
        // An untracked task (no inputs, no outputs) always runs: fingerprints of its success would never be
        // read, and storing them was a third of the history thread's work in a run of such tasks.
        // A restored task's outputs are those of a success with the same inputs: as good as its own success.
        let stored = (state == .succeeded || state == .restored) && answer?.cause != .untracked ? checked?.fingerprints : nil
        writer.append(.ended(record, fingerprints: stored), flushed: state != .upToDate)
    }

    /// Returns once every row recorded so far is committed, but for up-to-date verdicts (a kill loses them
    /// at no cost): call before showing events, so that nothing a user sees has ended is lost to a kill.
    /// Safe from any thread.
    public func flush() {
        writer.flush()
    }

    /// Closes the run's record; returns the problems met along the way, for the user to see.
    public func finish(_ summary: RunSummary, endTime: Date) -> [String] {
        writer.close()
        var endLost: String?
        do { try store.finishRun(run, outcome: RunOutcome(summary: summary), endTime: endTime) } catch {
            endLost = Self.cause(of: error)
        }
        var lines = problems.withLock { $0 }
        do { _ = try store.compactIfMostlyFree() } catch {
            lines.append("cannot give the free space of .jobgraph/state.db back: \(Self.cause(of: error))")
        }
        for (cause, rows) in lostHistory.withLock({ $0 }) {
            let end = endLost == cause ? " and its end" : ""
            if endLost == cause { endLost = nil }
            lines.append("cannot record the run's history in .jobgraph/state.db (\(rows) rows\(end) lost): \(cause)")
        }
        if let endLost { lines.append("cannot record the end of the run in .jobgraph/state.db: \(endLost)") }
        return lines
    }

    /// An error's words without the statement that met it: every batch fails on a different one.
    private static func cause(of error: any Error) -> String {
        (error as? SQLiteError).map { "SQLite error \($0.code): \($0.message)" } ?? "\(error)"
    }

    fileprivate func note(_ problem: String) {
        problems.withLock { $0.append(problem) }
    }
}
