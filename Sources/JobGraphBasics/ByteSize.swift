/// Sizes as `cache gc --max-size` and `resources: {mem: …}` take them: `5G`, `500M`, `100k`, `1024` (bytes); powers of 1024.
public enum ByteSize {
    /// `nil` for text that is not a size.
    public static func parse(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40]
        var digits = text.lowercased()
        if digits.hasSuffix("ib") { digits.removeLast(2) } else if digits.hasSuffix("b") { digits.removeLast() }
        var multiplier: Int64 = 1
        if let last = digits.last, let unit = units[last] {
            multiplier = unit
            digits.removeLast()
        }
        guard let number = Double(digits), number >= 0, number.isFinite, number * Double(multiplier) < 9e18 else { return nil }
        return Int64(number * Double(multiplier))
    }

    /// `1.5 GiB`, `12 KiB`, `300 B`.
    public static func text(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) B" }
        let rounded = (value * 10).rounded() / 10
        return (rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)) + " " + units[unit]
    }

    /// As a file writes a size, the unit one letter: `8G`, `1.5G`, `512M`, `300B`.
    public static func shortText(_ bytes: Int64) -> String {
        let full = text(bytes)
        guard let space = full.firstIndex(of: " ") else { return full }
        return String(full[..<space]) + String(full[full.index(after: space)])
    }
}
