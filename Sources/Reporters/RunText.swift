import Execution
import PipelineModel

/// The wording reporters share, so the plain lines, the board's permanent lines and the summary agree.
enum RunText {
    /// `[  0.41s]`: seconds since the run started, two decimals, right-aligned to six characters.
    static func elapsedStamp(_ seconds: Double) -> String {
        var text = ""
        appendElapsedStamp(seconds, to: &text)
        return text
    }

    /// `elapsedStamp`, appended to `text`: the plain lines make one for every transition.
    static func appendElapsedStamp(_ seconds: Double, to text: inout String) {
        text += "["
        appendFixed(seconds, decimals: 2, width: 6, to: &text)
        text += "s]"
    }

    /// `0.38s` under a minute, `2m05s` under an hour, `1h02m` beyond.
    static func duration(_ seconds: Double) -> String {
        let seconds = seconds.isFinite ? max(0, seconds) : 0
        if seconds < 59.995 { return fixed(seconds, decimals: 2) + "s" }
        return minutesAndHours(seconds)
    }

    /// `3.4s` under a minute, then as `duration`: for the board, which refreshes too often for hundredths.
    static func clock(_ seconds: Double) -> String {
        let seconds = seconds.isFinite ? max(0, seconds) : 0
        if seconds < 59.95 { return fixed(seconds, decimals: 1) + "s" }
        return minutesAndHours(seconds)
    }

    /// `compile[a]  executing -> failed  (attempt 2, 0.60s, exit 1)`, without the elapsed stamp.
    /// - Parameter showsReason: end with the transition's reason, if it has one (`run --explain`).
    static func transition(_ transition: TaskTransition, showsReason: Bool = false) -> String {
        var line = ""
        appendTransition(transition, showsReason: showsReason, to: &line)
        return line
    }

    /// `transition`, appended to `text`.
    static func appendTransition(_ transition: TaskTransition, showsReason: Bool = false, to line: inout String) {
        line += transition.task.rawValue
        line += "  "
        line += transition.from.rawValue
        line += " -> "
        line += transition.to.rawValue
        // The details in parentheses, appended as they come (no list to join: one for every line).
        var separator = "  ("
        func detail() {
            line += separator
            separator = ", "
        }
        if transition.attempt > 1 {
            detail()
            line += "attempt "
            line += String(transition.attempt)
        }
        if let duration = transition.duration {
            detail()
            let seconds = duration.isFinite ? max(0, duration) : 0
            if seconds < 59.995 {
                appendFixed(seconds, decimals: 2, to: &line)
                line += "s"
            } else {
                line += self.duration(seconds)
            }
        }
        if let exitCode = transition.exitCode {
            detail()
            line += "exit "
            line += String(exitCode)
        }
        if let error = transition.error, !error.isEmpty {
            detail()
            line += error
        }
        // `executing -> up-to-date` says it already.
        if showsReason, let reason = transition.reason, reason != transition.to.rawValue {
            detail()
            line += reason
        }
        if separator == ", " { line += ")" }
    }

    /// `compile[a] | line`: a line a task printed, prefixed by its id.
    static func output(task: TaskID, line: String) -> String { "\(task) | \(line)" }

    /// What happens once a signal asks the run to stop (contract: "Exit codes and signals").
    static func stopping(_ stop: RunStop) -> String {
        let cause = switch stop {
        case .interrupt: "interrupted (SIGINT)"
        case .terminate: "terminated (SIGTERM)"
        }
        return "\(cause): no new task starts; running tasks get SIGTERM, then SIGKILL after 5s"
    }

    /// `interrupted by SIGINT` or `terminated by SIGTERM`: how a stopped run ended.
    static func stopped(_ stop: RunStop) -> String {
        switch stop {
        case .interrupt: "interrupted by SIGINT"
        case .terminate: "terminated by SIGTERM"
        }
    }

    /// `512 B`, `3.1 KiB`, `12.0 MiB`, `1.2 GiB`.
    static func bytes(_ count: Int64) -> String {
        let units = ["KiB", "MiB", "GiB", "TiB"]
        guard count >= 1024 else { return "\(max(0, count)) B" }
        var value = Double(count) / 1024
        var unit = 0
        while value >= 1023.95, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return fixed(value, decimals: 1) + " " + units[unit]
    }

    /// Cuts `line` to at most `width` characters, ending in `…` when cut.
    static func truncated(_ line: String, width: Int) -> String {
        guard line.count > width else { return line }
        guard width > 1 else { return String(line.prefix(max(0, width))) }
        return String(line.prefix(width - 1)) + "…"
    }

    /// A non-negative number with a fixed count of decimals, always `.` as separator (no locale).
    static func fixed(_ value: Double, decimals: Int) -> String {
        var text = ""
        appendFixed(value, decimals: decimals, to: &text)
        return text
    }

    /// `fixed`, appended to `text`, right-aligned with spaces to at least `width` characters; written digit
    /// by digit, as the plain lines print two such numbers on every line.
    static func appendFixed(_ value: Double, decimals: Int, width: Int = 0, to text: inout String) {
        let value = value.isFinite ? max(0, value) : 0
        var scale = 1
        for _ in 0..<decimals { scale *= 10 }
        // Beyond Int's range a run has gone on for billions of years; clamp rather than trap.
        let units = Int(min((value * Double(scale)).rounded(), Double(Int.max / 2)))
        // Digits from the last: the decimals, the point, then the whole part (at least one digit).
        var digits: [UInt8] = []
        digits.reserveCapacity(24)
        var rest = units
        for _ in 0..<decimals {
            digits.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        }
        if decimals > 0 { digits.append(UInt8(ascii: ".")) }
        repeat {
            digits.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        for _ in 0..<max(0, width - digits.count) { digits.append(UInt8(ascii: " ")) }
        digits.reverse()
        text += String(decoding: digits, as: UTF8.self)
    }

    private static func minutesAndHours(_ seconds: Double) -> String {
        let total = Int(min(seconds.rounded(), Double(Int.max / 2)))
        if total < 3600 { return "\(total / 60)m" + twoDigits(total % 60) + "s" }
        return "\(total / 3600)h" + twoDigits(total % 3600 / 60) + "m"
    }

    private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
