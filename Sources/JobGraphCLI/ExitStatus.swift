import Execution

/// The exit statuses of the contract ("Exit codes and signals"); a run's own come from `RunExitStatus`.
public enum ExitStatus {
    /// Every selected task succeeded, was up to date, or was skipped by a condition.
    public static let success = RunExitStatus.success
    /// Some task failed.
    public static let taskFailed = RunExitStatus.taskFailed
    /// The pipeline or the command line is invalid; nothing ran.
    public static let invalid: Int32 = 2
    /// Interrupted by SIGINT.
    public static let interrupted = RunExitStatus.interrupted
    /// Terminated by SIGTERM.
    public static let terminated = RunExitStatus.terminated

    /// The status of a finished run: a signal that stopped it wins, then any failure not allowed, then an
    /// `--events` or `--trace` file that could not be written whole.
    public static func of(_ summary: RunSummary, writeFailures: WriteFailures? = nil) -> Int32 {
        RunExitStatus.of(summary, writeFailures: writeFailures)
    }

    /// The status of a command that SIGINT or SIGTERM stopped before its run began.
    static func of(stoppedBeforeTheRun stop: RunStop) -> Int32 {
        switch stop {
        case .interrupt: interrupted
        case .terminate: terminated
        }
    }
}
