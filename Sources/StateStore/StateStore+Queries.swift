#if canImport(Glibc)
import Glibc
#endif
import Foundation
import JobGraphSystem
import PipelineModel

/// Reading the run history: `jobgraph history`, and the durations that rank tasks by critical path.
extension StateStore {
    /// The latest runs, newest first. A run without an outcome reads as `running` while the process named
    /// in its pipeline's lock file holds that lock (it, or runs nested in it), else as `interrupted`.
    /// - Parameter pipelineFile: only this pipeline's runs; `nil` for every pipeline in the folder.
    public func recentRuns(pipelineFile: String? = nil, limit: Int = 10) throws -> [RunRecord] {
        let pipeline = pipelineFile.map(Self.pipelineKey)
        var lockHolderAlive: [String: Bool] = [:]
        return try withDatabase { database throws(SQLiteError) in
            let rows = try database.query("""
                SELECT id, pipeline, started_at, ended_at, outcome, task_count, nested_in FROM runs
                WHERE ?1 IS NULL OR pipeline = ?1 ORDER BY id DESC LIMIT ?2
                """, [.text(pipeline), .integer(Int64(max(0, limit)))]) { row in
                (id: RunID(row.integer(0)), pipeline: row.text(1), started: row.real(2), ended: row.optionalReal(3),
                 outcome: row.optionalText(4), taskCount: Int(row.integer(5)), nestedIn: row.optionalInteger(6).map(RunID.init))
            }
            return try rows.map { row throws(SQLiteError) in
                let outcome: RunOutcome
                if let text = row.outcome {
                    outcome = RunOutcome(rawValue: text) ?? .interrupted
                } else {
                    // A run that is not nested closes its pipeline's unfinished runs when it begins: those left
                    // while the lock is held are its own and its nested runs'.
                    let alive = lockHolderAlive[row.pipeline] ?? Self.lockHolderIsAlive(lockPath(for: row.pipeline))
                    lockHolderAlive[row.pipeline] = alive
                    outcome = alive ? .running : .interrupted
                }
                return RunRecord(id: row.id, pipeline: row.pipeline, startedAt: Date(timeIntervalSince1970: row.started),
                                 endedAt: row.ended.map { Date(timeIntervalSince1970: $0) }, outcome: outcome,
                                 taskCount: row.taskCount, tasks: try Self.stateCounts(of: row.id, taskCount: row.taskCount, in: database),
                                 nestedIn: row.nestedIn)
            }
        }
    }

    /// Every task recorded for `run`, in task-id order.
    public func tasks(of run: RunID) throws -> [TaskRecord] {
        try withDatabase { database throws(SQLiteError) in
            try database.query("""
                SELECT task, state, attempts, duration, exit_code, definition FROM task_runs WHERE run_id = ?1 ORDER BY task
                """, [.integer(run.rawValue)]) { row in
                TaskRecord(task: TaskID(row.text(0)), state: TaskState(rawValue: row.text(1)) ?? .executing,
                           attempts: Int(row.integer(2)), duration: row.optionalReal(3),
                           exitCode: row.optionalInteger(4).map { Int32(truncatingIfNeeded: $0) }, definition: row.optionalText(5))
            }
        }
    }

    /// Each task's median duration over its latest `samples` successful executions, in seconds: the
    /// durations that rank ready tasks by remaining critical path (contract: scheduling rules). Tasks
    /// never seen to succeed are absent; the caller counts them as the median of all.
    public func medianDurations(pipelineFile: String? = nil, samples: Int = 10) throws -> [TaskID: Double] {
        var medians: [TaskID: Double] = [:]
        for (task, durations) in try recentSuccessfulDurations(pipelineFile: pipelineFile, samples: samples) {
            medians[task] = Self.median(durations)
        }
        return medians
    }

    /// The tasks with the longest median duration over their latest `samples` successful executions.
    public func slowestTasks(pipelineFile: String? = nil, limit: Int = 10, samples: Int = 10) throws -> [TaskTiming] {
        let timings = try recentSuccessfulDurations(pipelineFile: pipelineFile, samples: samples).map { task, durations in
            TaskTiming(task: task, medianDuration: Self.median(durations), samples: durations.count)
        }
        let sorted = timings.sorted { left, right in
            left.medianDuration != right.medianDuration ? left.medianDuration > right.medianDuration : left.task < right.task
        }
        return Array(sorted.prefix(max(0, limit)))
    }

    /// Over the latest `window` runs: tasks that needed retries, or whose outcome flipped between
    /// succeeded and failed from one execution to the next while their definition fingerprint stayed the
    /// same (an edit that fixes or breaks a task is not flakiness). Flakiest first.
    public func flakyTasks(pipelineFile: String? = nil, limit: Int = 10, window: Int = 20) throws -> [FlakyTask] {
        let pipeline = pipelineFile.map(Self.pipelineKey)
        let rows = try withDatabase { database throws(SQLiteError) in
            try database.query("""
                SELECT task, state, attempts, definition FROM task_runs
                WHERE run_id IN (SELECT id FROM runs WHERE ?1 IS NULL OR pipeline = ?1 ORDER BY id DESC LIMIT ?2)
                AND state IN ('succeeded', 'failed')
                ORDER BY task, run_id
                """, [.text(pipeline), .integer(Int64(max(0, window)))]) { row in
                (task: row.text(0), failed: row.text(1) == TaskState.failed.rawValue, attempts: row.integer(2), definition: row.optionalText(3))
            }
        }
        var flaky: [FlakyTask] = []
        var index = 0
        while index < rows.count {
            let task = rows[index].task
            var entry = FlakyTask(task: TaskID(task), runs: 0, failures: 0, retriedRuns: 0, outcomeChanges: 0)
            var previous: (failed: Bool, definition: String?)?
            while index < rows.count, rows[index].task == task {
                let row = rows[index]
                entry.runs += 1
                if row.failed { entry.failures += 1 }
                if row.attempts > 1 { entry.retriedRuns += 1 }
                if let previous, previous.failed != row.failed, let definition = row.definition, definition == previous.definition {
                    entry.outcomeChanges += 1
                }
                previous = (row.failed, row.definition)
                index += 1
            }
            if entry.retriedRuns > 0 || entry.outcomeChanges > 0 { flaky.append(entry) }
        }
        flaky.sort { left, right in
            let a = left.retriedRuns + left.outcomeChanges, b = right.retriedRuns + right.outcomeChanges
            return a != b ? a > b : left.task < right.task
        }
        return Array(flaky.prefix(max(0, limit)))
    }

    /// Everything `jobgraph history FILE` shows.
    public func historyReport(pipelineFile: String, runs: Int = 10, tasks: Int = 10) throws -> HistoryReport {
        HistoryReport(pipeline: Self.pipelineKey(pipelineFile), runs: try recentRuns(pipelineFile: pipelineFile, limit: runs),
                      slowestTasks: try slowestTasks(pipelineFile: pipelineFile, limit: tasks),
                      flakyTasks: try flakyTasks(pipelineFile: pipelineFile, limit: tasks))
    }

    /// The middle value of `values` (the mean of the two middle ones for an even count); 0 when empty.
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    // MARK: - Helpers

    /// Per task, the durations of its latest `samples` successful executions, newest first. Counted per
    /// task rather than over the latest runs, so a task that has been up to date for many runs keeps
    /// the durations it had when it last ran.
    private func recentSuccessfulDurations(pipelineFile: String?, samples: Int) throws -> [TaskID: [Double]] {
        let pipeline = pipelineFile.map(Self.pipelineKey)
        let rows = try withDatabase { database throws(SQLiteError) in
            try database.query("""
                SELECT task, duration FROM (
                    SELECT t.task, t.duration, row_number() OVER (PARTITION BY t.task ORDER BY t.run_id DESC) AS position
                    FROM task_runs t JOIN runs r ON r.id = t.run_id
                    WHERE t.state = 'succeeded' AND t.duration IS NOT NULL AND (?1 IS NULL OR r.pipeline = ?1)
                ) WHERE position <= ?2
                """, [.text(pipeline), .integer(Int64(max(1, samples)))]) { row in (TaskID(row.text(0)), row.real(1)) }
        }
        var durations: [TaskID: [Double]] = [:]
        for (task, duration) in rows { durations[task, default: []].append(duration) }
        return durations
    }

    private static func stateCounts(of run: RunID, taskCount: Int, in database: SQLiteDatabase) throws(SQLiteError) -> TaskStateCounts {
        let rows = try database.query("SELECT state, count(*) FROM task_runs WHERE run_id = ?1 GROUP BY state", [.integer(run.rawValue)]) {
            (state: TaskState(rawValue: $0.text(0)), count: Int($0.integer(1)))
        }
        var counts = TaskStateCounts()
        var ended = 0
        for row in rows {
            switch row.state {
            case .succeeded: counts.succeeded += row.count
            case .failed: counts.failed += row.count
            case .upToDate: counts.upToDate += row.count
            case .restored: counts.restored += row.count
            case .skipped: counts.skipped += row.count
            case .cancelled: counts.cancelled += row.count
            default: continue
            }
            ended += row.count
        }
        counts.unfinished = max(0, taskCount - ended)
        return counts
    }

    /// Whether the process named in the lock file still holds its `flock`, as that process's open files say.
    /// A living pid alone does not say it: the pid of a run killed with SIGKILL may since name another
    /// process (pids wrap, at 32,768 on some machines), and the run would read as `running` for as long as
    /// that one lives. Where another user's process cannot be looked into, the pid is all there is. Read
    /// without taking the lock, so asking never gets in the way of a run that is starting.
    private static func lockHolderIsAlive(_ path: String) -> Bool {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),  // no lock file: nobody runs
              let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0 else { return false }
        var file = stat()
        guard stat(path, &file) == 0 else { return false }
        return ProcessSnapshot.holdsFileLock(pid, device: file.st_dev, inode: file.st_ino)
            ?? (kill(pid, 0) == 0 || errno == EPERM)
    }
}
