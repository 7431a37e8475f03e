import Execution
import Foundation
import PipelineModel

/// What each Slurm run submitted (`slurm_runs`, `slurm_jobs`), so that the run after a killed one can find
/// its jobs (docs/pipeline.md, "Reattach"). Every write is committed before the call returns.
extension StateStore {
    /// The ledger of the runs of `pipelineFile`, for the Slurm executor. Use it with the pipeline's run
    /// lock held: a run begins once its record has, and is then the pipeline's latest.
    public func jobLedger(pipelineFile: String) -> any JobLedger {
        StoreJobLedger(store: self, pipeline: Self.pipelineKey(pipelineFile))
    }
}

private struct StoreJobLedger: JobLedger {
    let store: StateStore
    let pipeline: String

    func begin(token: String) throws {
        try store.withDatabase { database throws(SQLiteError) in
            try database.run("""
                INSERT OR IGNORE INTO slurm_runs (token, pipeline, run_id)
                VALUES (?1, ?2, (SELECT max(id) FROM runs WHERE pipeline = ?2))
                """, [.text(token), .text(pipeline)])
        }
    }

    func submitting(_ jobs: [SubmittedJob]) throws {
        try submitted(jobs)
    }

    func submitted(_ jobs: [SubmittedJob]) throws {
        let now = Date().timeIntervalSince1970
        try store.withDatabase { database throws(SQLiteError) in
            try database.transaction { () throws(SQLiteError) in
                for job in jobs {
                    if job.intended == nil, let statusFile = job.statusFile {
                        try database.run("DELETE FROM slurm_jobs WHERE token = ?1 AND status_file = ?2 AND substr(job, 1, 1) = '?'",
                                         [.text(job.runToken), .text(statusFile)])
                    }
                    try database.run("""
                        INSERT OR REPLACE INTO slurm_jobs (token, job, task, attempt, status_file, submitted, kind, definition)
                        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                        """, [.text(job.runToken), .text(job.job), .text(job.task?.rawValue), .integer(job.attempt.map(Int64.init)),
                              .text(job.statusFile), .real(now), .text(job.kind.rawValue), .text(job.definition)])
                }
            }
        }
    }

    func ended(_ job: SubmittedJob) throws {
        try store.withDatabase { database throws(SQLiteError) in
            try database.run("UPDATE slurm_jobs SET slurm_state = ?3, exit_code = ?4, outcome = ?5 WHERE token = ?1 AND job = ?2",
                             [.text(job.runToken), .text(job.job), .text(job.schedulerState), .integer(job.exitCode.map(Int64.init)),
                              .text(job.outcome?.rawValue)])
        }
    }

    func unreleasedRuns(except token: String) throws -> [LedgerRun] {
        try store.withDatabase { database throws(SQLiteError) in
            let runs = try database.query("""
                SELECT token, run_id FROM slurm_runs WHERE pipeline = ?1 AND released = 0 AND token != ?2 ORDER BY run_id, token
                """, [.text(pipeline), .text(token)]) { row in (token: row.text(0), run: row.optionalInteger(1)) }
            return try runs.map { run throws(SQLiteError) in
                let jobs = try database.query("""
                    SELECT job, task, attempt, status_file, slurm_state, exit_code, outcome, kind, definition FROM slurm_jobs WHERE token = ?1
                    ORDER BY submitted, job
                    """, [.text(run.token)]) { row in
                    SubmittedJob(runToken: run.token, job: row.text(0), kind: row.optionalText(7).flatMap(SubmittedJob.Kind.init(rawValue:)),
                                 task: row.optionalText(1).map { TaskID($0) },
                                 attempt: row.optionalInteger(2).map { Int($0) }, statusFile: row.optionalText(3),
                                 schedulerState: row.optionalText(4), exitCode: row.optionalInteger(5).map { Int32(truncatingIfNeeded: $0) },
                                 outcome: row.optionalText(6).flatMap(TaskState.init(rawValue:)), definition: row.optionalText(8))
                }
                return LedgerRun(token: run.token, run: run.run, jobs: jobs)
            }
        }
    }

    func release(_ tokens: [String]) throws {
        try store.withDatabase { database throws(SQLiteError) in
            try database.transaction { () throws(SQLiteError) in
                for token in tokens { try database.run("UPDATE slurm_runs SET released = 1 WHERE token = ?1", [.text(token)]) }
            }
        }
    }
}
