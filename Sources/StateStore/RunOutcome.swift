import Execution

/// How a recorded run ended, as `jobgraph history` shows it.
public enum RunOutcome: String, Sendable, Codable, CaseIterable {
    /// Every selected task succeeded, was up to date, was skipped, or failed with `allow_failure`.
    case succeeded
    case failed
    /// Stopped by a signal, or never finished at all (killed with SIGKILL, the machine went down).
    case interrupted
    /// Not finished, and the process that started it still holds its pipeline's lock file (`.jobgraph/<file>.lock`).
    case running

    /// The outcome of a run that returned `summary`.
    public init(summary: RunSummary) {
        if summary.stop != nil {
            self = .interrupted
        } else {
            self = summary.hasFailures ? .failed : .succeeded
        }
    }
}

/// A run's row in the history, as `beginRun` returned it.
public struct RunID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// SQLite's rowid: 1 for the first run, increasing.
    public var rawValue: Int64

    public init(_ rawValue: Int64) { self.rawValue = rawValue }

    public static func < (lhs: RunID, rhs: RunID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { String(rawValue) }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
