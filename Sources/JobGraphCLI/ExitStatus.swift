import Execution

/// The exit statuses of the contract ("Exit codes and signals").
public enum ExitStatus {
    /// Every selected task succeeded, was up to date, or was skipped by a condition.
    public static let success: Int32 = 0
    /// Some task failed.
    public static let taskFailed: Int32 = 1
    /// The pipeline or the command line is invalid; nothing ran.
    public static let invalid: Int32 = 2
    /// Interrupted by SIGINT.
    public static let interrupted: Int32 = 130
    /// Terminated by SIGTERM.
    public static let terminated: Int32 = 143

    /// The status of a finished run: a signal that stopped it wins, then any failure not allowed, then an
    /// `--events` or `--trace` file that could not be written whole.
    public static func of(_ summary: RunSummary, writeFailures: WriteFailures? = nil) -> Int32 {
        switch summary.stop {
        case .interrupt?: return interrupted
        case .terminate?: return terminated
        case nil: return summary.hasFailures || writeFailures?.losesRequestedEvents == true ? taskFailed : success
        }
    }
}
