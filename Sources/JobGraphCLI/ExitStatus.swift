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
}
