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

    /// The status of a finished run: a signal that stopped it wins, then any failure not allowed, then an
    /// `--events` or `--trace` file that could not be written whole.
    public static func of(_ summary: RunSummary, writeFailures: WriteFailures? = nil) -> Int32 {
        if let stop = summary.stop { return of(stop) }
        return summary.hasFailures || writeFailures?.losesRequestedEvents == true ? taskFailed : success
    }

    /// The status of a run, or a command between runs, that SIGINT or SIGTERM stopped.
    public static func of(_ stop: RunStop) -> Int32 { stop == .interrupt ? interrupted : terminated }
}
