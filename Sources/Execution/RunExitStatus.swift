/// The exit statuses of a run that got as far as running (contract: "Exit codes and signals"), computed
/// here so that the event stream's `run-finished` and the CLI agree. An invalid pipeline (2) never runs.
public enum RunExitStatus {
    /// Every selected task succeeded, was up to date, or was skipped by a condition.
    public static let success: Int32 = 0
    /// Some task failed without `allow_failure`.
    public static let taskFailed: Int32 = 1
    /// Interrupted by SIGINT.
    public static let interrupted: Int32 = 130
    /// Terminated by SIGTERM.
    public static let terminated: Int32 = 143

    /// The status of a finished run: a signal that stopped it wins, then any failure not allowed.
    public static func of(_ summary: RunSummary) -> Int32 {
        switch summary.stop {
        case .interrupt?: return interrupted
        case .terminate?: return terminated
        case nil: return summary.hasFailures ? taskFailed : success
        }
    }
}
