import YAMLNodes

extension YAMLNode {
    /// The node as JSON text, with every scalar as our loader resolved it (YAML 1.2 core schema).
    ///
    /// Tools outside Swift (the JSON Schema check) judge this text, so they see exactly what jobgraph
    /// read: `off` and `NO` stay strings, `true` is a boolean, `3` an integer. Mapping keys are written
    /// as the key's text, in file order. JSON has no infinities or NaN, so `.inf` becomes `1e999` (which
    /// JSON readers take as infinity or reject as too large) and `.nan` becomes Python's `NaN`.
    public var jsonText: String {
        var output = ""
        appendJSON(to: &output)
        return output
    }

    private func appendJSON(to output: inout String) {
        switch content {
        case .scalar(let scalar):
            output += scalar.value.jsonText
        case .sequence(let items):
            output += "["
            for (index, item) in items.enumerated() {
                if index > 0 { output += "," }
                item.appendJSON(to: &output)
            }
            output += "]"
        case .mapping(let entries):
            output += "{"
            for (index, entry) in entries.enumerated() {
                if index > 0 { output += "," }
                // A key that is itself a list or mapping has no text; its JSON stands in as the name.
                output += YAMLNode.jsonString(entry.keyText ?? entry.key.jsonText)
                output += ":"
                entry.value.appendJSON(to: &output)
            }
            output += "}"
        }
    }

    /// `text` as a JSON string literal, quoted and escaped.
    public static func jsonString(_ text: String) -> String {
        var output = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                output.unicodeScalars.append(scalar)
            }
        }
        return output + "\""
    }
}

extension YAMLScalarValue {
    /// The value as a JSON literal; see `YAMLNode.jsonText` for non-finite numbers.
    var jsonText: String {
        switch self {
        case .null: "null"
        case .bool(let value): value ? "true" : "false"
        case .integer(let value): String(value)
        case .float(let value) where value.isNaN: "NaN"
        case .float(let value) where value.isInfinite: value < 0 ? "-1e999" : "1e999"
        // A whole float keeps its ".0" (Swift prints 2.0 as "2.0"), so readers still see a float.
        case .float(let value): "\(value)"
        case .string(let text): YAMLNode.jsonString(text)
        }
    }
}
