extension TaskGraph {
    /// The graph as a Mermaid flowchart, for `jobgraph graph --format mermaid` (renders in Markdown).
    ///
    /// Mermaid ids must be plain words, so node `i` is `n<i>` and its label carries the task id and,
    /// when it has them, its queue and its gates (parallel group, conditions, exclusivity categories,
    /// service); a dynamic fan-out is dashed and shown as `photo[*]`, a service is a rounded box. Edges run from
    /// a needed task to the task that needs it, dotted for a need found from files.
    public var mermaidText: String {
        var lines = ["flowchart LR"]
        for node in nodes {
            var label = Self.mermaidEscaped(node.displayName)
            if let queue = node.spec.queue { label += "<br/>queue: \(Self.mermaidEscaped(queue.value.rawValue))" }
            for note in node.spec.gateNotes { label += "<br/>" + Self.mermaidEscaped(note) }
            let (open, close) = node.spec.service != nil ? ("(", ")") : ("[", "]")
            lines.append("  n\(node.index)\(open)\"\(label)\"\(close)")
        }
        for node in nodes {
            for (edge, dependency) in dependencies[node.index].enumerated() {
                lines.append("  n\(dependency) \(isFoundFromFiles(node: node.index, edge: edge) ? "-.->" : "-->") n\(node.index)")
            }
        }
        let dynamic = nodes.filter(\.isDynamicFanOut).map { "n\($0.index)" }
        if !dynamic.isEmpty {
            lines.append("  classDef dynamic stroke-dasharray: 5 5")
            lines.append("  class \(dynamic.joined(separator: ",")) dynamic")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Text safe inside a quoted Mermaid label: Mermaid reads `#name;` as an entity and labels as HTML,
    /// so quotes, `#`, `&`, `<` and `>` become entity codes, and line breaks become spaces.
    static func mermaidEscaped(_ text: String) -> String {
        // Ids and queue names almost never need escaping; skip the character walk for them.
        let needsEscaping = text.utf8.contains { byte in
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "#"), UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"): true
            default: byte < 0x20
            }
        }
        if !needsEscaping { return text }
        var escaped = ""
        for character in text {
            switch character {
            case "\"": escaped += "#quot;"
            case "#": escaped += "#35;"
            case "&": escaped += "#amp;"
            case "<": escaped += "#lt;"
            case ">": escaped += "#gt;"
            case "\n", "\r", "\r\n": escaped += " "
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
