/// Writes one JSON object with its keys in the order they are added, which `JSONEncoder` does not keep
/// on Linux; the event stream's keys come in one documented order (docs/events.md).
///
/// Strings are escaped per RFC 8259; a non-finite number, which JSON cannot spell, is written as `null`.
struct JSONObjectWriter {
    private(set) var text = "{"
    private var isEmpty = true

    /// The finished object.
    var object: String { text + "}" }

    mutating func add(_ key: String, _ value: String) {
        addKey(key)
        Self.appendString(value, to: &text)
    }

    mutating func add(_ key: String, _ value: Int) {
        addKey(key)
        text += String(value)
    }

    mutating func add(_ key: String, _ value: Int64) {
        addKey(key)
        text += String(value)
    }

    mutating func add(_ key: String, _ value: Double) {
        addKey(key)
        text += Self.number(value)
    }

    mutating func add(_ key: String, _ value: Bool) {
        addKey(key)
        text += value ? "true" : "false"
    }

    /// A key whose value is already JSON text (a nested object or array built by this type).
    mutating func add(_ key: String, json: String) {
        addKey(key)
        text += json
    }

    /// Adds the key only when `value` is not nil.
    mutating func addIfPresent(_ key: String, _ value: String?) {
        if let value { add(key, value) }
    }

    mutating func addIfPresent(_ key: String, _ value: Int64?) {
        if let value { add(key, value) }
    }

    mutating func addIfPresent(_ key: String, _ value: Double?) {
        if let value { add(key, value) }
    }

    /// A JSON array of strings.
    static func array(_ values: [String]) -> String {
        var text = "["
        for (index, value) in values.enumerated() {
            if index > 0 { text += "," }
            appendString(value, to: &text)
        }
        return text + "]"
    }

    /// The shortest text that reads back as `value` (`0.25`, `1e-06`), or `null` when not finite.
    static func number(_ value: Double) -> String {
        // Swift's description is valid JSON for every finite value: `1.0`, `1e-06`, `1e+16`.
        value.isFinite ? "\(value)" : "null"
    }

    static func appendString(_ value: String, to text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{08}": text += "\\b"
            case "\u{0C}": text += "\\f"
            // Control characters, and the two line separators that JavaScript source must not hold raw.
            case "\u{00}"..."\u{1F}", "\u{2028}", "\u{2029}":
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }

    private mutating func addKey(_ key: String) {
        if !isEmpty { text += "," }
        isEmpty = false
        Self.appendString(key, to: &text)
        text += ":"
    }
}
