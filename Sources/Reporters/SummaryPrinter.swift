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
/// slurm: cancelled 2 jobs (41 42) with one scancel
/// ```
public struct SummaryPrinter: Sendable {
    /// Terminal states in the contract's order, then the states only a stopped run leaves tasks in.
    static let countOrder: [TaskState] = [.succeeded, .failed, .cancelled, .skipped, .upToDate, .restored,
                                          .pending, .waiting, .ready, .executing]

    /// Characters each log line is indented by under its failed task.
    public var logIndent: Int

    /// A printer indenting log lines by `logIndent` spaces.
    public init(logIndent: Int = 4) {
        self.logIndent = logIndent
    }

    /// The summary's lines, without newlines.
    /// - Parameter writeFailures: files that could not be written: an incomplete task log is marked where
    ///   the log is named and listed after the failures.
    public func render(_ summary: RunSummary, writeFailures: [WriteFailures.Failure] = []) -> [String] {
        let incomplete = Dictionary(writeFailures.compactMap { failure -> (String, WriteFailures.Failure)? in
            if case .taskLog = failure.target { (failure.path, failure) } else { nil }
        }, uniquingKeysWith: { first, _ in first })
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
            if !failure.logPath.isEmpty { line += "  (log: \(failure.logPath)\(incomplete[failure.logPath] == nil ? "" : ", incomplete"))" }
            lines.append(line)
            lines += failure.lastLines.map { indent + $0 }
        }
        lines += summary.leftBehind.map(Self.leftBehindLine)
        for failure in writeFailures {
            switch failure.target {
            case .taskLog(let task): lines.append("log of \(task) is incomplete: \(failure.reason)  (log: \(failure.path))")
            case .eventFile: lines.append("event file '\(failure.path)' is incomplete: \(failure.reason)")
            case .trace: lines.append("trace '\(failure.path)' was not written: \(failure.reason)")
            case .console: break  // said when it happened, on the other stream if it still could be
            }
        }
        if let stop = summary.stop { lines.append(RunText.stopped(stop)) }
        return lines + summary.executorNotes
    }

    /// `2 processes left behind by task `daemon` were stopped`.
    static func leftBehindLine(_ group: RunSummary.LeftBehind) -> String {
        let processes = group.processCount == 1 ? "1 process" : "\(group.processCount) processes"
        let task = group.task.map { "task `\($0)`" } ?? "an unknown task"
        return "\(processes) left behind by \(task) \(group.processCount == 1 ? "was" : "were") stopped"
    }
}
