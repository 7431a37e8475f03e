import Execution
import JobGraphBasics
import PipelineModel

/// The wording reporters share, so the plain lines, the board's permanent lines and the summary agree.
enum RunText {
    /// `[  0.41s]`: seconds since the run started, two decimals, right-aligned to six characters.
    static func elapsedStamp(_ seconds: Double) -> String {
        var bytes: [UInt8] = []
        appendElapsedStamp(seconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `elapsedStamp`'s UTF-8, appended to `bytes`: the plain lines make one for every transition, and
    /// appending bytes costs a fraction of appending small `String`s (callgrind, a no-op rerun's 30,000 lines).
    static func appendElapsedStamp(_ seconds: Double, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "["))
        appendFixed(seconds, decimals: 2, width: 6, to: &bytes)
        bytes.append(UInt8(ascii: "s"))
        bytes.append(UInt8(ascii: "]"))
    }

    /// `0.38s` under a minute, `2m05s` under an hour, `1h02m` beyond.
    static func duration(_ seconds: Double) -> String {
        var bytes: [UInt8] = []
        appendDuration(seconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `duration`'s UTF-8, appended to `bytes`: a transition's details carry one on most lines.
    static func appendDuration(_ seconds: Double, to bytes: inout [UInt8]) {
        let seconds = seconds.isFinite ? max(0, seconds) : 0
        guard seconds < 59.995 else { return bytes += minutesAndHours(seconds).utf8 }
        appendFixed(seconds, decimals: 2, to: &bytes)
        bytes.append(UInt8(ascii: "s"))
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
        var bytes: [UInt8] = []
        appendTransition(transition, showsReason: showsReason, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `transition`'s UTF-8, appended to `bytes`.
    static func appendTransition(_ transition: TaskTransition, showsReason: Bool = false, to bytes: inout [UInt8]) {
        bytes.appendUTF8(of: transition.task.rawValue)
        bytes.appendUTF8(of: "  ")
        bytes.appendUTF8(of: transition.from.rawValue)
        bytes.appendUTF8(of: " -> ")
        bytes.appendUTF8(of: transition.to.rawValue)
        // The details in parentheses, appended as they come (no list to join: one for every line).
        var isFirst = true
        func detail() {
            bytes += (isFirst ? "  (" : ", ").utf8
            isFirst = false
        }
        if transition.attempt > 1 {
            detail()
            bytes += "attempt \(transition.attempt)".utf8
        }
        if let duration = transition.duration {
            detail()
            appendDuration(duration, to: &bytes)
        }
        if let exitCode = transition.exitCode {
            detail()
            bytes += "exit \(exitCode)".utf8
        }
        if let error = transition.error, !error.isEmpty {
            detail()
            bytes += error.utf8
        }
        if let note = transition.resourcesNote {
            detail()
            bytes += note.utf8
        }
        // `executing -> up-to-date` says it already.
        if showsReason, let reason = transition.reason, reason != transition.to.rawValue {
            detail()
            bytes += reason.utf8
        }
        if !isFirst { bytes.append(UInt8(ascii: ")")) }
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
        var bytes: [UInt8] = []
        appendFixed(value, decimals: decimals, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `fixed`'s UTF-8, appended to `bytes`, right-aligned with spaces to at least `width` characters;
    /// written digit by digit, as the plain lines print two such numbers on every line.
    ///
    /// The digits go into a buffer on the stack, last first, and join `bytes` in one append: appended one
    /// by one and then reversed in place, each number cost about 1,000 instructions (callgrind, the 30,000
    /// lines of a checked no-op rerun).
    static func appendFixed(_ value: Double, decimals: Int, width: Int = 0, to bytes: inout [UInt8]) {
        let value = value.isFinite ? max(0, value) : 0
        var scale = 1
        for _ in 0..<decimals { scale *= 10 }
        // Beyond Int's range a run has gone on for billions of years; clamp rather than trap.
        let units = Int(min((value * Double(scale)).rounded(), Double(Int.max / 2)))
        // At most 19 digits, a point and the decimals (a count the callers keep small), then the padding.
        let capacity = 21 + decimals + max(0, width)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
            var start = capacity
            func prepend(_ byte: UInt8) {
                start -= 1
                buffer[start] = byte
            }
            var rest = units
            for _ in 0..<decimals {
                prepend(UInt8(ascii: "0") + UInt8(rest % 10))
                rest /= 10
            }
            if decimals > 0 { prepend(UInt8(ascii: ".")) }
            repeat {
                prepend(UInt8(ascii: "0") + UInt8(rest % 10))
                rest /= 10
            } while rest > 0
            while capacity - start < width { prepend(UInt8(ascii: " ")) }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start...]))
        }
    }

    private static func minutesAndHours(_ seconds: Double) -> String {
        let total = Int(min(seconds.rounded(), Double(Int.max / 2)))
        if total < 3600 { return "\(total / 60)m" + twoDigits(total % 60) + "s" }
        return "\(total / 3600)h" + twoDigits(total % 3600 / 60) + "m"
    }

    private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
