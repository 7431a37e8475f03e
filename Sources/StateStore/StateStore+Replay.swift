import Execution
import Foundation
import PipelineModel
import YAMLNodes

/// Replaying a no-op rerun's verdict (`NoOpReplayRecord`, docs/state.md): recording it after a run that
/// found every task up to date, checking that it still holds, and the replayed run's history.
extension StateStore {
    /// `state_generation`: bumped by triggers on every change to the tables up-to-date checks read.
    static func generation(in database: SQLiteDatabase) throws(SQLiteError) -> Int64 {
        try database.query("SELECT generation FROM state_generation WHERE id = 1") { $0.integer(0) }.first ?? -1
    }

    /// The pipeline's replay record when the verdict it holds still stands, else `nil`: checked cheapest
    /// first (the tables' generation, the pipeline file, the command, the source run's history, then
    /// each examined path's status). Any doubt, a read that fails included, is `nil`: the normal
    /// path, which is always right.
    /// - Parameters:
    ///   - key: `NoOpReplayRecord.key` of this command.
    ///   - pipeline: the pipeline file as it is now.
    public func validReplay(pipelineFile: String, key: [UInt8], pipeline: PipelineFileDigest) -> NoOpReplayRecord? {
        replayCandidate(pipelineFile: pipelineFile, key: key, pipeline: pipeline)?.validRecord()
    }

    /// The pipeline's replay record when the checks that read `state.db` pass (see `validReplay`); the
    /// rest, decoding it and examining its paths, is `ReplayCandidate.validRecord`, which needs no database.
    public func replayCandidate(pipelineFile: String, key: [UInt8], pipeline: PipelineFileDigest) -> ReplayCandidate? {
        let found = try? withDatabase { database throws(SQLiteError) -> ReplayCandidate? in
            try database.readTransaction { () throws(SQLiteError) -> ReplayCandidate? in
                let generation = try Self.generation(in: database)
                let candidate = try database.withCachedStatement("""
                    SELECT key, pipeline_length, pipeline_hash, generation, source_run, task_count, pipeline_content, body
                    FROM noop_replays WHERE pipeline = ?1
                    """) { row throws(SQLiteError) -> ReplayCandidate? in
                    try row.bind([.text(Self.pipelineKey(pipelineFile))])
                    defer { try? row.reset() }  // a reset after a read cannot fail in a way that matters
                    // The body, last in the row, is read only once everything before it matched.
                    guard try row.step(), row.integer(3) == generation else { return nil }
                    let stored = PipelineFileDigest(length: row.integer(1), hash: UInt64(bitPattern: row.integer(2)),
                                                    content: row.withBytes(6, YAMLContentDigest.init(storedBytes:)) ?? nil)
                    // Other bytes may still say the same: the caller reads them to tell (`contentToMatch`).
                    let contentToMatch: YAMLContentDigest?
                    if stored.hasBytes(of: pipeline) {
                        contentToMatch = nil
                    } else if let content = stored.content {
                        contentToMatch = content
                    } else {
                        return nil
                    }
                    guard row.withBytes(0, { Self.equal($0, key) }) == true else { return nil }
                    return ReplayCandidate(key: key, pipeline: pipeline, generation: generation, sourceRun: RunID(row.integer(4)),
                                           taskCount: Int(row.integer(5)), body: row.blob(7), contentToMatch: contentToMatch)
                }
                guard let candidate else { return nil }
                let rows = try database.query("SELECT count(*) FROM task_runs WHERE run_id = \(Self.runHoldingRows)",
                                              [.integer(candidate.sourceRun.rawValue)]) {
                    $0.integer(0)
                }.first
                return rows == Int64(candidate.taskCount) ? candidate : nil
            }
        }
        return found ?? nil
    }

    /// Drops the pipeline's oldest replayed runs so that the replay about to begin is within `retainedRuns`,
    /// done apart so that it can go on while the replay examines its paths.
    ///
    /// A replay drops only runs that share another run's rows, a row of `runs` each. A run with rows of its
    /// own is left to the next run that checks its tasks, whose history thread drops it while that run goes
    /// on. Why: dropping a run of 100,000 tasks took 0.24 s, longer than the replay it held up (perf: the
    /// replay of a 100,000-task rerun took 0.46 s instead of 0.22 s once 50 runs were kept). Runs beyond
    /// `retainedRuns` are then bounded by the runs with rows among them, themselves at most `retainedRuns`.
    public func makeRoomForRun(pipelineFile: String) throws {
        try withDatabase { database throws(SQLiteError) in
            try database.transaction { () throws(SQLiteError) in
                try dropOldRuns(of: pipelineFile, keeping: retainedRuns - 1, onlyRunsWithoutRows: true, in: database)
            }
        }
    }

    private static func equal(_ stored: UnsafeRawBufferPointer, _ bytes: [UInt8]) -> Bool {
        guard stored.count == bytes.count else { return false }
        guard let storedStart = stored.baseAddress, !bytes.isEmpty else { return true }
        return bytes.withUnsafeBytes { mine in mine.baseAddress.map { memcmp($0, storedStart, bytes.count) == 0 } ?? false }
    }

    /// Records that a replay of `record` starts, in one transaction: its `runs` row, naming the run it
    /// replays and sharing that run's task rows and attempts (`task_rows_of`) rather than copying them
    /// (copying 10,000 rows took 161 M instructions, as long as the rest of the replay), and the drop of
    /// the oldest runs, which keeps the shared rows while a kept run needs them.
    /// - Parameter jobs: the `--jobs` of this run.
    /// - Returns: the new run; `nil`, with nothing written, when the source run's rows are no longer all there.
    public func beginReplayedRun(_ record: NoOpReplayRecord, startTime: Date, jobs: Int) throws -> RunID? {
        let source = SQLiteValue.integer(record.sourceRun.rawValue)
        sealsOnClose(false)
        return try withDatabase { database throws(SQLiteError) in
            try database.transaction { () throws(SQLiteError) -> RunID? in
                let rows = try database.query("SELECT count(*) FROM task_runs WHERE run_id = \(Self.runHoldingRows)", [source]) {
                    $0.integer(0)
                }.first
                guard rows == Int64(record.tasks.count) else { return nil }
                // A record that held for the file's content names its bytes from now on, so the next rerun
                // of the same file replays without loading it. No change for a record that held for them.
                try database.run("""
                    UPDATE noop_replays SET pipeline_length = ?2, pipeline_hash = ?3
                    WHERE pipeline = ?1 AND source_run = ?4 AND (pipeline_length != ?2 OR pipeline_hash != ?3)
                    """, [.text(Self.pipelineKey(record.pipelineFile)), .integer(record.pipeline.length),
                          .integer(Int64(bitPattern: record.pipeline.hash)), source])
                try database.run("UPDATE runs SET outcome = 'interrupted' WHERE outcome IS NULL")
                try database.run("""
                    INSERT INTO runs (pipeline, started_at, task_count, jobs, critical_path, replayed_run, task_rows_of)
                    SELECT ?1, ?2, task_count, ?3, ?5, id, coalesce(task_rows_of, id) FROM runs WHERE id = ?4
                    """, [.text(Self.pipelineKey(record.pipelineFile)), .real(startTime.timeIntervalSince1970),
                          .integer(Int64(jobs)), source, .text(record.criticalPath.map(\.rawValue).joined(separator: "\n"))])
                let run = RunID(database.lastInsertRowID)
                // Usually nothing, after `makeRoomForRun`.
                try dropOldRuns(of: record.pipelineFile, onlyRunsWithoutRows: true, in: database)
                return run
            }
        }
    }

    /// After a run, keeps a replay record of its verdict when the next run may replay it (see docs/state.md),
    /// else forgets any record of the pipeline. Two runs leave one:
    /// - a run that found every task up to date before it started: its own events, and the paths its
    ///   pre-pass examined, in one transaction whose generation check makes sure the tables are still as
    ///   the pre-pass read them;
    /// - a build that ended with every task done (`build`): the events a rerun that finds every task up
    ///   to date sends, and the paths its tasks' checks examined (`BuildEvidence`), with the tables as the
    ///   build left them, each task's success in them.
    /// - Parameters:
    ///   - recorder: the run's history, whose findings the record rests on; finished.
    ///   - capture: the run's events, as `NoOpReplay` must send them again; `nil` when the run was not eligible.
    ///   - build: what a rerun finding every task up to date sends; `nil` when the run was not eligible. Asked
    ///     for only when the run's own events cannot serve (it takes a pass over the graph).
    ///   - key: `NoOpReplayRecord.key` of the command.
    ///   - pipeline: the pipeline file as read before the run loaded it, and still the same after the run.
    /// - Returns: whether a record was kept.
    @discardableResult
    public func recordReplay(after recorder: RunRecorder, capture: NoOpReplayCapture?, build: () -> NoOpReplay? = { nil },
                             pipelineFile: String, key: [UInt8], pipeline: PipelineFileDigest?, outputMode: String?) throws -> Bool {
        guard let pipeline else {
            try forgetReplay(pipelineFile: pipelineFile)
            return false
        }
        let findings = recorder.replayFindings.withLock { $0 }
        if let captured = capture?.capturedRun, let findings, findings.evidence.isReplayable,
           findings.evidence.upToDateTasks == captured.tasks.count {
            let generation = findings.evidence.generation
            let row = ReplayRow(NoOpReplayRecord(key: key, pipeline: pipeline, generation: generation,
                                                 sourceRun: recorder.run, pipelineFile: captured.pipelineFile, outputMode: outputMode,
                                                 paths: findings.paths, tasks: captured.tasks, criticalPath: captured.criticalPath))
            // A run whose pre-pass refreshed a file record (an input copied over, same content) moved the
            // generation since its checks: then the verdict rests on what its checks examined, as a build's.
            if try keep(row, as: pipelineFile, when: { current, _ throws(SQLiteError) in current == generation }) {
                return true
            }
        }
        // Taken out of the recorder: its memory goes once the record is made (100,000 paths: about 10 MB).
        let evidence = recorder.buildEvidence.withLock { evidence in
            var taken = BuildEvidence()
            swap(&taken, &evidence)
            return taken
        }
        guard evidence.isComplete, recorder.recordedWholeHistory, let build = build(), evidence.doneTasks == build.tasks.count,
              let paths = evidence.examinedPaths(path: path(ofFileKey:)) else {
            try forgetReplay(pipelineFile: pipelineFile)
            return false
        }
        // The generation is the one the build's last write left: the run lock kept every other run out.
        let row = ReplayRow(NoOpReplayRecord(key: key, pipeline: pipeline, generation: 0, sourceRun: recorder.run,
                                             pipelineFile: build.pipelineFile, outputMode: outputMode, paths: consume paths,
                                             tasks: build.tasks, criticalPath: build.criticalPath))
        return try keep(row, as: pipelineFile) { _, database throws(SQLiteError) in
            // Every task's success is in the tables (a history row lost to a full disk would leave one out).
            let trusted = try database.query("""
                SELECT count(*) FROM task_runs t JOIN task_fingerprints f ON f.task = t.task
                WHERE t.run_id = \(Self.runHoldingRows) AND f.succeeded = 1
                """, [.integer(recorder.run.rawValue)]) { $0.integer(0) }.first
            return trusted == Int64(build.tasks.count)
        }
    }

    /// A replay record as `noop_replays` stores it: made before the transaction, so the record's paths and
    /// tasks are gone while SQLite copies the row.
    private struct ReplayRow {
        var key: [UInt8]
        var pipeline: PipelineFileDigest
        var sourceRun: RunID
        var taskCount: Int
        var body: [UInt8]

        init(_ record: NoOpReplayRecord) {
            key = record.key
            pipeline = record.pipeline
            sourceRun = record.sourceRun
            taskCount = record.tasks.count
            body = record.body
        }
    }

    /// Stores `row` as the replay record of `pipelineFile`, in one transaction, when `holds` says so of the
    /// tables' generation as they are now (which the stored record then names); else forgets any record.
    private func keep(_ row: ReplayRow, as pipelineFile: String,
                      when holds: (Int64, SQLiteDatabase) throws(SQLiteError) -> Bool) throws -> Bool {
        let pipeline = Self.pipelineKey(pipelineFile)
        return try withDatabase { database throws(SQLiteError) in
            try database.transaction { () throws(SQLiteError) -> Bool in
                let generation = try Self.generation(in: database)
                guard try holds(generation, database) else {
                    try database.run("DELETE FROM noop_replays WHERE pipeline = ?1", [.text(pipeline)])
                    return false
                }
                try database.runBindingBlobsInPlace("""
                    INSERT OR REPLACE INTO noop_replays
                    (pipeline, key, pipeline_length, pipeline_hash, generation, source_run, task_count, body, pipeline_content)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                    """, [.text(pipeline), .blob(row.key), .integer(row.pipeline.length), .integer(Int64(bitPattern: row.pipeline.hash)),
                          .integer(generation), .integer(row.sourceRun.rawValue), .integer(Int64(row.taskCount)), .blob(row.body),
                          row.pipeline.content.map { .blob($0.storedBytes) } ?? .null])
                return true
            }
        }
    }

    /// Forgets the pipeline's replay record, so its next run checks its tasks.
    public func forgetReplay(pipelineFile: String) throws {
        try withDatabase { database throws(SQLiteError) in
            try database.run("DELETE FROM noop_replays WHERE pipeline = ?1", [.text(Self.pipelineKey(pipelineFile))])
        }
    }
}
