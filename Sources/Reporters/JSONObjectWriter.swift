/// Writes one JSON object with its keys in the order they are added, which `JSONEncoder` does not keep
/// on Linux; the event stream's keys come in one documented order (docs/events.md).
///
/// Strings are escaped per RFC 8259; a non-finite number, which JSON cannot spell, is written as `null`.
///
/// Built as UTF-8 bytes: appended to a `String` piece by piece, and each string walked scalar by scalar,
/// the 30,000 events of a no-op rerun of 10,000 tasks cost 2.4 G instructions, more than the rerun itself
/// (callgrind).
struct JSONObjectWriter {
    private(set) var bytes: [UInt8] = [UInt8(ascii: "{")]
    private var isEmpty = true

    /// The finished object.
    var object: String {
        var finished = bytes
        finished.append(UInt8(ascii: "}"))
        return String(decoding: finished, as: UTF8.self)
    }

    /// Appends the finished object to `buffer`.
    func appendObject(to buffer: inout [UInt8]) {
        buffer.append(contentsOf: bytes)
        buffer.append(UInt8(ascii: "}"))
    }

    mutating func add(_ key: String, _ value: String) {
        addKey(key)
        Self.appendString(value, to: &bytes)
    }

    mutating func add(_ key: String, _ value: Int) {
        add(key, Int64(value))
    }

    mutating func add(_ key: String, _ value: Int64) {
        addKey(key)
        Self.appendInteger(value, to: &bytes)
    }

    mutating func add(_ key: String, _ value: Double) {
        addKey(key)
        bytes.append(contentsOf: Self.number(value).utf8)
    }

    mutating func add(_ key: String, _ value: Bool) {
        addKey(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// A key whose value is already JSON text (a nested object or array built by this type).
    mutating func add(_ key: String, json: String) {
        addKey(key)
        bytes.append(contentsOf: json.utf8)
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
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendString(value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The shortest text that reads back as `value` (`0.25`, `1e-06`), or `null` when not finite.
    static func number(_ value: Double) -> String {
        // Swift's description is valid JSON for every finite value: `1.0`, `1e-06`, `1e+16`.
        value.isFinite ? "\(value)" : "null"
    }

    static func appendString(_ value: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        // Most strings (keys, task ids, states, paths) need no escape and go in whole.
        let copied = value.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            guard !utf8.contains(where: needsEscape) else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if copied != true {
            for scalar in value.unicodeScalars { appendEscaped(scalar, to: &bytes) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Whether a UTF-8 byte may need an escape: a control character, a quote, a backslash, or the first
    /// byte of U+2028 and U+2029 (0xE2, shared with other characters, which the slow path keeps as they are).
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0xE2
    }

    private static func appendEscaped(_ scalar: Unicode.Scalar, to bytes: inout [UInt8]) {
        let escape: String? = switch scalar {
        case "\"": "\\\""
        case "\\": "\\\\"
        case "\n": "\\n"
        case "\r": "\\r"
        case "\t": "\\t"
        case "\u{08}": "\\b"
        case "\u{0C}": "\\f"
        // Control characters, and the two line separators that JavaScript source must not hold raw.
        case "\u{00}"..."\u{1F}", "\u{2028}", "\u{2029}":
            "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
        default: nil
        }
        if let escape {
            bytes.append(contentsOf: escape.utf8)
        } else {
            bytes.append(contentsOf: UTF8.encode(scalar)!)
        }
    }

    private static func appendInteger(_ value: Int64, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        let start = bytes.count
        var rest = value.magnitude
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        bytes[start...].reverse()
    }

    private mutating func addKey(_ key: String) {
        if !isEmpty { bytes.append(UInt8(ascii: ",")) }
        isEmpty = false
        Self.appendString(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }
}
