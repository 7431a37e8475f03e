import Foundation
import PipelineModel

/// Writing the run history: one transaction per call, so a run killed at any moment leaves whole rows.
extension StateStore {
    /// Records that a run starts; call while holding the run lock.
    ///
    /// Any earlier run of this pipeline still without an outcome died without finishing (the lock proves
    /// nobody runs it), so it is marked `interrupted` here, unless this run is nested in one that holds the
    /// lock (`RunLock.isNested`); runs beyond `retainedRuns` for this pipeline are dropped.
    /// - Parameters:
    ///   - pipelineFile: the pipeline file as the user named it; runs are filed under its name.
    ///   - taskCount: tasks selected for the run.
    ///   - dropsOldRuns: drop the runs beyond `retainedRuns` here; a caller that passes `false` records
    ///     `HistoryWrite.dropOldRuns` later.
    ///   - isNested: the run goes on under the lock of the run that started it, which is still running.
    ///   - nestedIn: that run, when known (`RunRecorder.runVariable`), which the history names.
    public func beginRun(pipelineFile: String, startTime: Date, taskCount: Int, dropsOldRuns: Bool = true,
                         isNested: Bool = false, nestedIn: RunID? = nil) throws -> RunID {
        let pipeline = Self.pipelineKey(pipelineFile)
        sealsOnClose(false)
        return try withDatabase { database throws(SQLiteError) in
            try database.transaction { () throws(SQLiteError) -> RunID in
                if !isNested {
                    try database.run("UPDATE runs SET outcome = 'interrupted' WHERE outcome IS NULL AND pipeline = ?1", [.text(pipeline)])
                }
                try database.run("INSERT INTO runs (pipeline, started_at, task_count, nested_in) VALUES (?1, ?2, ?3, ?4)",
                                 [.text(pipeline), .real(startTime.timeIntervalSince1970), .integer(Int64(taskCount)),
                                  .integer(isNested ? nestedIn?.rawValue : nil)])
                let id = RunID(database.lastInsertRowID)
                if dropsOldRuns { try dropOldRuns(of: pipelineFile, in: database) }
                return id
            }
        }
    }

    /// Drops the pipeline's runs beyond `retainedRuns`, newest kept, with their rows (ON DELETE CASCADE).
    private func dropOldRuns(of pipelineFile: String, in database: SQLiteDatabase) throws(SQLiteError) {
        try database.run("""
            DELETE FROM runs WHERE pipeline = ?1
            AND id NOT IN (SELECT id FROM runs WHERE pipeline = ?1 ORDER BY id DESC LIMIT ?2)
            """, [.text(Self.pipelineKey(pipelineFile)), .integer(Int64(retainedRuns))])
    }

    /// Records that a task starts executing in `run`: until it succeeds, it is no longer up to date,
    /// even if the process is killed before it ends and its outputs are half written.
    public func recordTaskStarted(_ task: TaskID, run: RunID) throws {
        try record([.started(task)], run: run)
    }

    /// Records how a task ended in `run`, in one transaction: its history row and, for a success with
    /// `fingerprints`, what the next up-to-date check compares against. A task that executed and did not
    /// succeed (failed, cancelled) stops being up to date.
    /// - Parameter fingerprints: from `checkUpToDate` before the task ran; ignored unless it succeeded.
    public func recordTask(_ record: TaskRecord, run: RunID, fingerprints: TaskFingerprints? = nil) throws {
        try self.record([.ended(record, fingerprints: fingerprints)], run: run)
    }

    /// Records several starts and ends in `run`, in order, in one transaction, as `recordTaskStarted` and
    /// `recordTask` would one by one.
    public func record(_ writes: [HistoryWrite], run: RunID) throws {
        guard !writes.isEmpty else { return }
        if writes.contains(where: { if case .ended(_, .some) = $0 { true } else { false } }) { filesChanged.withLock { $0 = true } }
        let overtaken = Self.startsOvertaken(in: writes)
        try withDatabase { database throws(SQLiteError) in
            try database.transaction { () throws(SQLiteError) in
                // One statement for every row of the batch: looking the statement up by its text and
                // binding through an array cost about 8,000 instructions a row (callgrind, no-op rerun).
                try database.withCachedStatement(Self.taskRunRow) { row throws(SQLiteError) in
                    for (index, write) in writes.enumerated() {
                        switch write {
                        case .started(let task):
                            if !overtaken.contains(index) { try insertStart(of: task, run: run, in: database) }
                        case .ended(let record, let fingerprints):
                            try insert(record, run: run, fingerprints: fingerprints, row: row, in: database)
                        case .endedUntracked(var record, let definition):
                            record.definition = definition.fingerprint
                            try insert(record, run: run, fingerprints: nil, row: row, in: database)
                        case .dropOldRuns(let pipelineFile): try dropOldRuns(of: pipelineFile, in: database)
                        }
                    }
                }
            }
            // Under the database's lock, as `hasRecordedRun` reads them: a task whose runs are all dropped
            // since still counts as one that ran, until the process ends.
            recordedTasks.withLock { recorded in
                guard recorded != nil else { return }
                for write in writes {
                    switch write {
                    case .started(let task): recorded?.insert(task.rawValue)
                    case .ended(let record, _), .endedUntracked(let record, _): recorded?.insert(record.task.rawValue)
                    case .dropOldRuns: break
                    }
                }
            }
        }
    }

    /// The positions of starts whose task's end comes later in the same batch, after it executed: that end
    /// writes the same history row and withdraws (or replaces) the same success, in the same transaction, so the start's
    /// two statements change nothing anyone can see. A clean run's batches hold most tasks' start and end
    /// (perf: the history thread was a fifth of a 10,000-task run's user time).
    static func startsOvertaken(in writes: [HistoryWrite]) -> Set<Int> {
        var endedLater: Set<TaskID> = []
        var overtaken: Set<Int> = []
        for index in writes.indices.reversed() {
            if case .started(let task) = writes[index] {
                if endedLater.contains(task) { overtaken.insert(index) }
            } else if let record = writes[index].endedRecord, record.attempts > 0 {
                switch record.state {
                case .succeeded, .failed, .cancelled, .restored: endedLater.insert(record.task)
                default: break
                }
            }
        }
        return overtaken
    }

    private func insertStart(of task: TaskID, run: RunID, in database: SQLiteDatabase) throws(SQLiteError) {
        try database.run("""
            INSERT INTO task_runs (run_id, task, state, attempts) VALUES (?1, ?2, 'executing', 1)
            ON CONFLICT (run_id, task) DO UPDATE SET state = 'executing'
            """, [.integer(run.rawValue), .text(task.rawValue)])
        try Self.withdrawSuccess(of: fingerprintKey(task), in: database)
    }

    /// The task's last success is no longer trusted, committed at once: it is about to execute, and a kill
    /// midway must not leave its half-written outputs looking up to date.
    public func withdrawSuccess(of task: TaskID) throws {
        try withDatabase { database throws(SQLiteError) in try Self.withdrawSuccess(of: fingerprintKey(task), in: database) }
    }

    /// The task's last success is no longer trusted: it started executing again, or ended without one.
    /// - Parameter key: the task's `fingerprintKey`.
    private static func withdrawSuccess(of key: String, in database: SQLiteDatabase) throws(SQLiteError) {
        try database.run("UPDATE task_fingerprints SET succeeded = 0 WHERE task = ?1", [.text(key)])
    }

    /// A task's history row in a run, `TaskRecord`'s fields bound as `insert` does.
    private static let taskRunRow = """
        INSERT INTO task_runs (run_id, task, state, attempts, duration, exit_code, definition)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
        ON CONFLICT (run_id, task) DO UPDATE SET state = excluded.state, attempts = excluded.attempts,
            duration = excluded.duration, exit_code = excluded.exit_code, definition = excluded.definition
        """

    /// - Parameter row: `taskRunRow`, prepared.
    private func insert(_ record: TaskRecord, run: RunID, fingerprints: TaskFingerprints?, row: SQLiteStatement,
                        in database: SQLiteDatabase) throws(SQLiteError) {
        try row.bind(.integer(run.rawValue), at: 1)
        try row.bind(.text(record.task.rawValue), at: 2)
        try row.bind(.text(record.state.rawValue), at: 3)
        try row.bind(.integer(Int64(record.attempts)), at: 4)
        try row.bind(.real(record.duration), at: 5)
        try row.bind(.integer(record.exitCode.map(Int64.init)), at: 6)
        try row.bind(.text(record.definition), at: 7)
        while try row.step() {}
        try row.reset()
        switch record.state {
        case .succeeded, .restored:
            // Restored outputs are those of a success with the same definition and inputs (docs/cache.md).
            if let fingerprints {
                try Self.store(fingerprints, for: fingerprintKey(record.task), in: database)
            } else {
                // No fingerprints to trust (an untracked task, or one whose check failed): none of an
                // earlier success stays trusted either, as its start already saw to.
                try Self.withdrawSuccess(of: fingerprintKey(record.task), in: database)
            }
        case .failed, .cancelled:
            // Only one that executed: cancelled while waiting leaves its outputs as they were.
            if record.attempts > 0 {
                try Self.withdrawSuccess(of: fingerprintKey(record.task), in: database)
            }
        default:
            break
        }
    }

    /// Records a task's success outside any run's history (the runner may prefer `recordTask`, which does
    /// this in the same transaction as the history row).
    public func recordSuccess(_ task: TaskID, fingerprints: TaskFingerprints) throws {
        filesChanged.withLock { $0 = true }
        try withDatabase { database throws(SQLiteError) in
            try database.transaction { () throws(SQLiteError) in try Self.store(fingerprints, for: fingerprintKey(task), in: database) }
        }
    }

    /// Records how a run ended; `endTime` is wall-clock time.
    ///
    /// Also forgets the content hashes of files that no recorded success refers to (inputs of tasks that
    /// failed, files that no longer match): they are only a cache, and the table would otherwise keep
    /// every file that ever matched a pattern. Only after a run that changed either table: the search
    /// cost a no-op rerun of 10,000 tasks 84 M instructions (callgrind); what a killed run left waits
    /// for the next run that changes something.
    public func finishRun(_ run: RunID, outcome: RunOutcome, endTime: Date) throws {
        let forgetsFiles = filesChanged.withLock { $0 }
        try withDatabase { database throws(SQLiteError) in
            try database.transaction { () throws(SQLiteError) in
                try database.run("UPDATE runs SET outcome = ?2, ended_at = ?3 WHERE id = ?1",
                                 [.integer(run.rawValue), .text(outcome.rawValue), .real(endTime.timeIntervalSince1970)])
                if forgetsFiles { try database.run("DELETE FROM files WHERE path NOT IN (SELECT path FROM task_inputs)") }
            }
        }
        if forgetsFiles { filesChanged.withLock { $0 = false } }
        sealsOnClose(true)
    }

    /// - Parameter key: the task's `fingerprintKey`.
    private static func store(_ fingerprints: TaskFingerprints, for key: String, in database: SQLiteDatabase) throws(SQLiteError) {
        // Deleting first also drops the old inputs (ON DELETE CASCADE).
        try database.run("DELETE FROM task_fingerprints WHERE task = ?1", [.text(key)])
        try database.run("INSERT INTO task_fingerprints (task, definition, succeeded, definition_text) VALUES (?1, ?2, 1, ?3)",
                         [.text(key), .text(fingerprints.definition), .text(fingerprints.definitionText)])
        try database.withCachedStatement("INSERT OR REPLACE INTO task_inputs (task, path, sha256) VALUES (?1, ?2, ?3)") { statement throws(SQLiteError) in
            for input in fingerprints.inputs {
                try statement.bind([.text(key), .text(input.path), .text(input.sha256)])
                try statement.step()
                try statement.reset()
            }
        }
    }
}
