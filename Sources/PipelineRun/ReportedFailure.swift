/// A failure already told on standard error, which ends the command with exit status 2.
public struct ReportedFailure: Error {}
