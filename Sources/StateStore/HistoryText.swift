import Foundation

/// `jobgraph history FILE` as plain text: the lines to print, without trailing newlines.
public enum HistoryText {
    /// The report as aligned lines: the runs (newest first), then the slowest and the flaky tasks.
    /// - Parameter timeZone: the zone run start times are shown in.
    public static func lines(for report: HistoryReport, timeZone: TimeZone = .current) -> [String] {
        guard !report.runs.isEmpty else { return ["no runs of \(report.pipeline) recorded yet"] }
        var lines = ["runs of \(report.pipeline), newest first"]
        var table = [["RUN", "STARTED", "OUTCOME", "DURATION", "TASKS"]]
        for run in report.runs {
            table.append(["#\(run.id)", timestamp(run.startedAt, in: timeZone), run.outcome.rawValue,
                          run.duration.map(duration) ?? "-", taskSummary(run) + (run.nestedIn.map { ", nested in #\($0)" } ?? "")])
        }
        lines += aligned(table)
        if !report.slowestTasks.isEmpty {
            lines += ["", "slowest tasks (median of their latest successful runs)"]
            lines += aligned(report.slowestTasks.map { timing in
                [timing.task.rawValue, duration(timing.medianDuration), timing.samples == 1 ? "1 run" : "\(timing.samples) runs"]
            })
        }
        lines.append("")
        if report.flakyTasks.isEmpty {
            lines.append("no flaky tasks in the recent runs")
        } else {
            lines.append("flaky tasks (retried, or changed outcome without a change of definition)")
            lines += aligned(report.flakyTasks.map { [$0.task.rawValue, flakiness($0)] })
        }
        return lines
    }

    /// `38 up-to-date, 2 succeeded, 1 failed`: the non-zero counts, in the order a user scans for.
    static func taskSummary(_ run: RunRecord) -> String {
        let counts = run.tasks
        let parts = [(counts.failed, "failed"), (counts.cancelled, "cancelled"), (counts.unfinished, "unfinished"),
                     (counts.succeeded, "succeeded"), (counts.upToDate, "up-to-date"),
                     (counts.restored, "restored"), (counts.skipped, "skipped")]
            .filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
        return parts.isEmpty ? "no tasks" : parts.joined(separator: ", ")
    }

    static func flakiness(_ task: FlakyTask) -> String {
        var parts: [String] = []
        if task.retriedRuns > 0 { parts.append("retried in \(task.retriedRuns) of \(task.runs) runs") }
        if task.outcomeChanges > 0 {
            parts.append("outcome changed \(task.outcomeChanges == 1 ? "once" : "\(task.outcomeChanges) times")")
        }
        parts.append("failed \(task.failures) of \(task.runs)")
        return parts.joined(separator: "; ")
    }

    /// `2025-01-03 14:03:12` in `timeZone`.
    static func timestamp(_ date: Date, in timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { let value = value ?? 0; return value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day)) \(two(parts.hour)):\(two(parts.minute)):\(two(parts.second))"
    }

    /// `0.38s` under a minute, `2m05s` under an hour, `1h02m` beyond: as the run summary writes them.
    static func duration(_ seconds: Double) -> String {
        let seconds = seconds.isFinite ? max(0, seconds) : 0
        if seconds < 59.995 {
            let hundredths = Int((seconds * 100).rounded())
            let fraction = hundredths % 100
            return "\(hundredths / 100)." + (fraction < 10 ? "0" : "") + "\(fraction)s"
        }
        let total = Int(min(seconds.rounded(), Double(Int.max / 2)))
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        if total < 3600 { return "\(total / 60)m" + two(total % 60) + "s" }
        return "\(total / 3600)h" + two(total % 3600 / 60) + "m"
    }

    /// Columns padded to their widest cell, two spaces apart, indented by two; no trailing spaces.
    static func aligned(_ rows: [[String]]) -> [String] {
        let columns = rows.map(\.count).max() ?? 0
        let widths = (0..<columns).map { column in rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
        return rows.map { row in
            let cells = row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }
            return "  " + cells.joined(separator: "  ")
        }
    }
}
