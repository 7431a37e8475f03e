/// The YAML 1.2 core schema's resolution of plain scalars (https://yaml.org/spec/1.2.2/#1032-tag-resolution).
///
/// Kept in one place so the choice that `yes`, `off` and `NO` stay strings is visible and testable.
enum CoreSchema {
    static func resolve(plain text: String) -> YAMLScalarValue {
        // Most scalars are words; only these first bytes can start anything but a string, so the
        // rest skip the comparisons below.
        // Most scalars are words; only these first bytes, and for a word only its length in the
        // list below (`~`, `null`, `true`, `false`), can make anything but a string, so the rest skip
        // the comparisons.
        guard let first = text.utf8.first else { return .null }
        switch first {
        case UInt8(ascii: "~"):
            if text.utf8.count != 1 { return .string(text) }
        case UInt8(ascii: "n"), UInt8(ascii: "N"), UInt8(ascii: "t"), UInt8(ascii: "T"):
            if text.utf8.count != 4 { return .string(text) }
        case UInt8(ascii: "f"), UInt8(ascii: "F"):
            if text.utf8.count != 5 { return .string(text) }
        case UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            break
        default:
            return .string(text)
        }
        switch text {
        case "", "~", "null", "Null", "NULL": return .null
        case "true", "True", "TRUE": return .bool(true)
        case "false", "False", "FALSE": return .bool(false)
        case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return .float(.infinity)
        case "-.inf", "-.Inf", "-.INF": return .float(-.infinity)
        case ".nan", ".NaN", ".NAN": return .float(.nan)
        default: break
        }
        guard let first = text.utf8.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+")
            || first == UInt8(ascii: ".") || (first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9"))
        else { return .string(text) }
        if let integer = integer(text) { return integer }
        if isFloat(text), let value = Double(text) { return .float(value) }
        return .string(text)
    }

    private static func integer(_ text: String) -> YAMLScalarValue? {
        if text.hasPrefix("0o"), text.count > 2 {
            return Int(text.dropFirst(2), radix: 8).map { .integer($0) } ?? .float(.infinity)
        }
        if text.hasPrefix("0x"), text.count > 2 {
            return Int(text.dropFirst(2), radix: 16).map { .integer($0) }
        }
        var digits = Substring(text)
        if digits.first == "-" || digits.first == "+" { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        // An integer too large for Int is still a number, just not one we can count with.
        return Int(text).map { .integer($0) } ?? Double(text).map { .float($0) }
    }

    /// `[-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?`
    private static func isFloat(_ text: String) -> Bool {
        var bytes = Array(text.utf8)[...]
        if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        func digitRun() -> Int {
            var count = 0
            while let byte = bytes.first, byte >= 0x30, byte <= 0x39 { bytes = bytes.dropFirst(); count += 1 }
            return count
        }
        let integerDigits = digitRun()
        var fractionDigits = 0
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            fractionDigits = digitRun()
        } else if integerDigits == 0 {
            return false
        }
        if integerDigits == 0 && fractionDigits == 0 { return false }
        if let e = bytes.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
            if digitRun() == 0 { return false }
        }
        return bytes.isEmpty
    }
}
