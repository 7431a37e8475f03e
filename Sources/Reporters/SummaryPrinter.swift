import Execution
import PipelineModel

/// Renders the lines printed at the end of every run, whatever the progress mode.
///
/// ```
/// 3 succeeded, 1 failed, 2 skipped in 4.20s
/// critical path: fetch -> build -> test
/// test failed: exit 1  (log: .jobgraph/logs/test.log)
///     error: expected 2, got 3
/// 2 processes left behind by task `daemon` were stopped
/// interrupted by SIGINT
/// ```
public struct SummaryPrinter: Sendable {
    /// Terminal states in the contract's order, then the states only a stopped run leaves tasks in.
    static let countOrder: [TaskState] = [.succeeded, .failed, .cancelled, .skipped, .upToDate,
                                          .pending, .waiting, .ready, .executing]

    /// Characters each log line is indented by under its failed task.
    public var logIndent: Int

    /// A printer indenting log lines by `logIndent` spaces.
    public init(logIndent: Int = 4) {
        self.logIndent = logIndent
    }

    /// The summary's lines, without newlines.
    public func render(_ summary: RunSummary) -> [String] {
        let counts = Self.countOrder.compactMap { state -> String? in
            guard let count = summary.counts[state], count > 0 else { return nil }
            return "\(count) \(state.rawValue)"
        }
        let tally = counts.isEmpty ? "no tasks ran" : counts.joined(separator: ", ")
        var lines = ["\(tally) in \(RunText.duration(summary.wallTime))"]
        if !summary.criticalPath.isEmpty {
            let ids = summary.criticalPath.map(\.rawValue)
            // A long chain is shown by its ends, so the summary stays one readable line.
            let shown = ids.count <= 8 ? ids : ids.prefix(3) + ["… \(ids.count - 6) more …"] + ids.suffix(3)
            lines.append("critical path: " + shown.joined(separator: " -> ") + (ids.count > 8 ? " (\(ids.count) tasks)" : ""))
        }
        let indent = String(repeating: " ", count: max(0, logIndent))
        for failure in summary.failures {
            var line = "\(failure.id) failed"
            if failure.allowed { line += " (allowed)" }
            var reasons: [String] = []
            if let exitCode = failure.exitCode { reasons.append("exit \(exitCode)") }
            if !failure.reason.isEmpty { reasons.append(failure.reason) }
            if !reasons.isEmpty { line += ": " + reasons.joined(separator: ", ") }
            if !failure.logPath.isEmpty { line += "  (log: \(failure.logPath))" }
            lines.append(line)
            lines += failure.lastLines.map { indent + $0 }
        }
        lines += summary.leftBehind.map(Self.leftBehindLine)
        if let stop = summary.stop { lines.append(RunText.stopped(stop)) }
        return lines
    }

    /// `2 processes left behind by task `daemon` were stopped`.
    static func leftBehindLine(_ group: RunSummary.LeftBehind) -> String {
        let processes = group.processCount == 1 ? "1 process" : "\(group.processCount) processes"
        let task = group.task.map { "task `\($0)`" } ?? "an unknown task"
        return "\(processes) left behind by \(task) \(group.processCount == 1 ? "was" : "were") stopped"
    }
}
