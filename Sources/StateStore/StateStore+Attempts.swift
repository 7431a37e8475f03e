import Execution
import Foundation
import PipelineModel

/// The attempts of a run, for `jobgraph report`: written once when the run ends, read back per run.
extension StateStore {
    /// Records `run`'s attempts, its `--jobs` and the critical path it took, in one transaction.
    public func recordAttempts(_ attempts: some Sequence<TaskAttempt>, run: RunID, jobs: Int, criticalPath: [TaskID]) throws {
        try withDatabase { database throws(SQLiteError) in
            try database.transaction { () throws(SQLiteError) in
                try database.run("UPDATE runs SET jobs = ?2, critical_path = ?3 WHERE id = ?1",
                                 [.integer(run.rawValue), .integer(Int64(jobs)),
                                  .text(criticalPath.map(\.rawValue).joined(separator: "\n"))])
                try database.withCachedStatement("""
                    INSERT OR REPLACE INTO task_attempts
                    (run_id, task, attempt, queue, slot, started, ended, outcome, exit_code, error, log_tail)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                    """) { statement throws(SQLiteError) in
                    for attempt in attempts {
                        try statement.bind([
                            .integer(run.rawValue), .text(attempt.task.rawValue), .integer(Int64(attempt.attempt)),
                            .text(attempt.queue), .integer(Int64(attempt.slot)), .real(attempt.start), .real(attempt.end),
                            .text(attempt.outcome.rawValue), .integer(attempt.exitCode.map(Int64.init)), .text(attempt.error),
                            .text(attempt.logTail.isEmpty ? nil : attempt.logTail.joined(separator: "\n")),
                        ])
                        try statement.step()
                        try statement.reset()
                    }
                }
            }
        }
    }

    /// Everything the report of one run needs; `nil` when the history holds no such run of this pipeline.
    /// - Parameter run: a run id as `jobgraph history` shows it; `nil` for the latest run.
    public func runTimeline(pipelineFile: String, run: RunID? = nil) throws -> RunTimeline? {
        let runs = try recentRuns(pipelineFile: pipelineFile, limit: max(retainedRuns, 1))
        guard let record = run.map({ id in runs.first { $0.id == id } }) ?? runs.first else { return nil }
        let id = record.id
        let tasks = try self.tasks(of: id)
        return try withDatabase { database throws(SQLiteError) in
            let header = try database.query("SELECT jobs, critical_path FROM runs WHERE id = ?1", [.integer(id.rawValue)]) { row in
                (jobs: row.optionalInteger(0).map { Int($0) }, path: row.optionalText(1))
            }.first
            let attempts = try database.query("""
                SELECT task, attempt, queue, slot, started, ended, outcome, exit_code, error, log_tail
                FROM task_attempts WHERE run_id = ?1 ORDER BY started, task, attempt
                """, [.integer(id.rawValue)]) { row in
                TaskAttempt(task: TaskID(row.text(0)), attempt: Int(row.integer(1)), queue: row.text(2), slot: Int(row.integer(3)),
                            start: row.real(4), end: row.optionalReal(5), outcome: TaskState(rawValue: row.text(6)) ?? .executing,
                            exitCode: row.optionalInteger(7).map { Int32(truncatingIfNeeded: $0) }, error: row.optionalText(8),
                            logTail: row.optionalText(9).map { $0.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) } ?? [])
            }
            let path = (header?.path ?? "").split(separator: "\n").map { TaskID(String($0)) }
            return RunTimeline(run: record, jobs: header?.jobs ?? nil, criticalPath: path, attempts: attempts, tasks: tasks)
        }
    }
}

/// One run as `jobgraph report` shows it.
public struct RunTimeline: Sendable {
    public var run: RunRecord
    /// The run's `--jobs`; `nil` for a run recorded before version 2 of the state file, or killed.
    public var jobs: Int?
    /// The chain of tasks that decided the run's length, first to last.
    public var criticalPath: [TaskID]
    /// Every attempt, in the order they started; empty for a run recorded before attempts were kept.
    public var attempts: [TaskAttempt]
    /// How each task ended.
    public var tasks: [TaskRecord]
}
