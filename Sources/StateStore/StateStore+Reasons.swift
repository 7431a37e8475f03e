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
    func hasRecordedRun(of task: TaskID) throws(SQLiteError) -> Bool {
        try withDatabase { database throws(SQLiteError) in
            try !database.query("SELECT 1 FROM task_runs WHERE task = ?1 LIMIT 1", [.text(task.rawValue)]) { _ in true }.isEmpty
        }
    }

    /// The definition stored with the task's last success (`TaskDefinition.canonicalEncoding`), if any.
    func storedDefinitionText(of task: TaskID) throws(SQLiteError) -> String? {
        try withDatabase { database throws(SQLiteError) in
            try database.query("SELECT definition_text FROM task_fingerprints WHERE task = ?1", [.text(task.rawValue)]) {
                $0.optionalText(0)
            }.first ?? nil
        }
    }
}
