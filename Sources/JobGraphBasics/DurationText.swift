/// Parses the contract's durations: `500ms`, `10s`, `10m`, `2h`, `1h30m`, or a bare number of seconds.
public enum DurationText {
    /// The longest duration a pipeline may give: a year. Longer ones are refused when the file is checked,
    /// so that every timer and deadline made from one stays far inside the 64-bit nanoseconds of the clocks
    /// (1e16 seconds once trapped converting to `Int64`).
    public static let longestSeconds: Double = 365 * 86_400

    /// The duration in seconds, or `nil` when `text` is not a duration.
    public static func seconds(from text: String) -> Double? {
        let text = text.trimmingWhitespace()
        if text.isEmpty { return nil }
        if let plain = Double(text) { return plain.isFinite && plain >= 0 ? plain : nil }
        var total = 0.0
        var number = ""
        var index = text.startIndex
        var sawUnit = false
        while index < text.endIndex {
            let character = text[index]
            if character.isASCII, character.isNumber || character == "." {
                number.append(character)
                index = text.index(after: index)
                continue
            }
            var unit = ""
            while index < text.endIndex, text[index].isASCII, text[index].isLetter {
                unit.append(text[index])
                index = text.index(after: index)
            }
            guard let value = Double(number), let scale = scales[unit] else { return nil }
            total += value * scale
            number = ""
            sawUnit = true
        }
        guard number.isEmpty, sawUnit, total.isFinite else { return nil }
        return total
    }

    /// A configured duration as the file would write it: `90s`, `10m`, `2h`, `1.5s`.
    public static func text(forSeconds seconds: Double) -> String {
        if seconds >= 3600, seconds.truncatingRemainder(dividingBy: 3600) == 0 { return "\(Int(seconds / 3600))h" }
        if seconds >= 60, seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60))m" }
        if seconds == seconds.rounded() { return "\(Int(seconds))s" }
        return "\(seconds)s"
    }

    private static let scales: [String: Double] = ["ms": 0.001, "s": 1, "m": 60, "h": 3600]
}

extension String {
    func trimmingWhitespace() -> Substring {
        var slice = self[...]
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return slice
    }
}
