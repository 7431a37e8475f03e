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
}
