import PipelineModel

/// A run that finds every task up to date, as the run before it did, shares that run's task rows
/// (`SharedTaskRows`, docs/state.md).
extension StateStore {
    /// The rows `run` may share: those of the run that holds the rows of the pipeline's previous run, when
    /// it has `taskCount` of them, each up to date. `nil` when there is no such run.
    func upToDateRowsToShare(before run: RunID, pipelineFile: String, taskCount: Int) throws(SQLiteError) -> SharedTaskRows? {
        try withDatabase { database throws(SQLiteError) in
            try database.readTransaction { () throws(SQLiteError) -> SharedTaskRows? in
                let source = try database.query("""
                    SELECT coalesce(task_rows_of, id) FROM runs WHERE pipeline = ?1 AND id < ?2 ORDER BY id DESC LIMIT 1
                    """, [.text(Self.pipelineKey(pipelineFile)), .integer(run.rawValue)]) { RunID($0.integer(0)) }.first
                guard let source else { return nil }
                var tasks = Set<String>(minimumCapacity: taskCount)
                var allUpToDate = true
                try database.withCachedStatement("SELECT task, state, attempts FROM task_runs WHERE run_id = ?1") { rows throws(SQLiteError) in
                    try rows.bind([.integer(source.rawValue)])
                    defer { try? rows.reset() }  // a reset after a read cannot fail in a way that matters
                    while allUpToDate, try rows.step() {
                        allUpToDate = rows.text(1) == TaskState.upToDate.rawValue && rows.integer(2) == 0
                        tasks.insert(rows.text(0))
                    }
                }
                guard allUpToDate, tasks.count == taskCount else { return nil }
                return SharedTaskRows(source: source, tasks: tasks)
            }
        }
    }

    /// Makes `run` share the task rows of `source`, unless `source` is gone (dropped as an old run since):
    /// returns whether it does.
    func shareRows(of source: RunID, with run: RunID) throws(SQLiteError) -> Bool {
        try withDatabase { database throws(SQLiteError) in
            try database.transaction { () throws(SQLiteError) -> Bool in
                let sourceIsKept = try !database.query("SELECT 1 FROM runs WHERE id = ?1", [.integer(source.rawValue)], row: { _ in true }).isEmpty
                guard sourceIsKept else { return false }
                try database.run("UPDATE runs SET task_rows_of = ?2 WHERE id = ?1", [.integer(run.rawValue), .integer(source.rawValue)])
                return true
            }
        }
    }
}
