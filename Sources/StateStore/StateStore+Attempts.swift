import Execution
import Foundation
import PipelineModel

/// The attempts of a run, for `jobgraph report`: written once when the run ends, read back per run.
extension StateStore {
    /// Records `run`'s attempts, its `--jobs`, the critical path it took and its resource totals, in one transaction.
    /// - Parameter resources: the run's totals (`RunStart.resources`); `nil` when its pipeline declares none.
    public func recordAttempts(_ attempts: some Sequence<TaskAttempt>, run: RunID, jobs: Int, criticalPath: [TaskID],
                               resources: [ResourceTotal]? = nil) throws {
        try withDatabase { database throws(SQLiteError) in
            try database.transaction { () throws(SQLiteError) in
                try database.run("UPDATE runs SET jobs = ?2, critical_path = ?3 WHERE id = ?1",
                                 [.integer(run.rawValue), .integer(Int64(jobs)),
                                  .text(criticalPath.map(\.rawValue).joined(separator: "\n"))])
                for (position, total) in (resources ?? []).enumerated() {
                    try database.run("INSERT OR REPLACE INTO run_resources (run_id, position, name, total, source) VALUES (?1, ?2, ?3, ?4, ?5)",
                                     [.integer(run.rawValue), .integer(Int64(position)), .text(total.name), .integer(total.total),
                                      .text(total.source?.rawValue)])
                }
                try database.withCachedStatement("""
                    INSERT OR REPLACE INTO task_attempts
                    (run_id, task, attempt, queue, slot, started, ended, outcome, exit_code, error, log_tail, resources)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
                    """) { statement throws(SQLiteError) in
                    for attempt in attempts {
                        try statement.bind([
                            .integer(run.rawValue), .text(attempt.task.rawValue), .integer(Int64(attempt.attempt)),
                            .text(attempt.queue), .integer(Int64(attempt.slot)), .real(attempt.start), .real(attempt.end),
                            .text(attempt.outcome.rawValue), .integer(attempt.exitCode.map(Int64.init)), .text(attempt.error),
                            .text(attempt.logTail.isEmpty ? nil : attempt.logTail.joined(separator: "\n")),
                            .text(attempt.resources.map(Self.text(of:))),
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
                SELECT task, attempt, queue, slot, started, ended, outcome, exit_code, error, log_tail, resources
                FROM task_attempts WHERE run_id = ?1 ORDER BY started, task, attempt
                """, [.integer(id.rawValue)]) { row in
                TaskAttempt(task: TaskID(row.text(0)), attempt: Int(row.integer(1)), queue: row.text(2), slot: Int(row.integer(3)),
                            start: row.real(4), end: row.optionalReal(5), outcome: TaskState(rawValue: row.text(6)) ?? .executing,
                            exitCode: row.optionalInteger(7).map { Int32(truncatingIfNeeded: $0) }, error: row.optionalText(8),
                            logTail: row.optionalText(9).map { $0.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) } ?? [],
                            resources: row.optionalText(10).map(Self.resources(in:)))
            }
            let totals = try database.query("SELECT name, total, source FROM run_resources WHERE run_id = ?1 ORDER BY position",
                                            [.integer(id.rawValue)]) { row in
                ResourceTotal(name: row.text(0), total: row.integer(1), source: row.optionalText(2).flatMap(TotalSource.init(rawValue:)))
            }
            let path = (header?.path ?? "").split(separator: "\n").map { TaskID(String($0)) }
            return RunTimeline(run: record, jobs: header?.jobs ?? nil, criticalPath: path, attempts: attempts, tasks: tasks,
                               resources: totals.isEmpty ? nil : totals)
        }
    }

    /// An attempt's amounts as `task_attempts.resources` keeps them: `cpus=2,mem=2147483648`.
    static func text(of resources: Resources) -> String {
        resources.amounts.map { "\($0.name)=\($0.value)" }.joined(separator: ",")
    }

    /// The amounts `text(of:)` wrote; a piece that is not `NAME=INTEGER` is passed over.
    static func resources(in text: String) -> Resources {
        Resources(text.split(separator: ",").compactMap { piece in
            let parts = piece.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let value = Int64(parts[1]) else { return nil }
            return Resources.Amount(name: String(parts[0]), value: value)
        })
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
    /// The run's resource totals, `cpus` first; `nil` when its pipeline declared none, or an older
    /// jobgraph (state version 10 or before) ran it.
    public var resources: [ResourceTotal]? = nil
}
