import Execution
import PipelineModel

/// The finer reasons of an up-to-date check, looked up only for a task that must run anyway, so a no-op
/// rerun reads no more than a fingerprint per task.
extension StateStore {
    /// `reason` made precise from the history: "never ran" rather than "no recorded success" when no run
    /// of the task is on record; what changed in its definition (the command, a variable …) when the
    /// definition of its last success was stored with it.
    func explained(_ reason: RunReason, of task: TaskID, definition: TaskDefinition) -> RunReason {
        switch reason {
        case .neverSucceeded:
            // A store that cannot say keeps the plainer reason.
            return (try? hasRecordedRun(of: task)) == false ? .neverRan : reason
        case .definitionChanged:
            // Rows from before `definition_text`, or a store that cannot say, keep the plainer reason.
            guard let text = try? storedDefinitionText(of: task), let old = TaskDefinition(canonicalEncoding: text) else { return reason }
            return definition.change(from: old) ?? reason
        default:
            return reason
        }
    }

    /// Whether the history holds any run of `task`, whatever its end.
    ///
    /// The history's tasks are read once, in one scan, and kept (`recordedTasks`): `task_runs` has no index
    /// by task (state schema 8), and a run asks this of every task it finds without a success.
    func hasRecordedRun(of task: TaskID) throws(SQLiteError) -> Bool {
        if let known = recordedTasks.withLock({ $0?.contains(task.rawValue) }) { return known }
        // Read under the database's lock, which `record` holds while it adds to the set: no row is missed.
        return try withDatabase { database throws(SQLiteError) in
            if let known = recordedTasks.withLock({ $0?.contains(task.rawValue) }) { return known }
            let tasks = Set(try database.query("SELECT DISTINCT task FROM task_runs") { $0.text(0) })
            recordedTasks.withLock { $0 = tasks }
            return tasks.contains(task.rawValue)
        }
    }

    /// The definition stored with the task's last success (`TaskDefinition.canonicalEncoding`), if any.
    func storedDefinitionText(of task: TaskID) throws(SQLiteError) -> String? {
        try withDatabase { database throws(SQLiteError) in
            try database.query("SELECT definition_text FROM task_fingerprints WHERE task = ?1", [.text(fingerprintKey(task))]) {
                $0.optionalText(0)
            }.first ?? nil
        }
    }
}
