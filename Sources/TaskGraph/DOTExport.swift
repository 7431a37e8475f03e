extension TaskGraph {
    /// The graph in Graphviz DOT, for `jobgraph graph --format dot`.
    ///
    /// One box per node, labelled with its id and, when it has them, its queue and its gates (parallel
    /// group, conditions, exclusivity categories, service); a dynamic fan-out is dashed and shown as
    /// `photo[*]`, a service is rounded. Edges run from a needed task to the task that needs it, in the
    /// direction work flows. Every id is quoted, so `make[a]` or an item with quotes stays one id.
    public var dotText: String {
        var lines = ["digraph \(Self.dotQuoted(pipeline.name ?? "pipeline")) {", "  rankdir=LR;", "  node [shape=box];"]
        for node in nodes {
            var label = node.displayName
            if let queue = node.spec.queue { label += "\nqueue: \(queue.value)" }
            for note in node.spec.gateNotes { label += "\n" + note }
            let styles = (node.isDynamicFanOut ? ["dashed"] : []) + (node.spec.service != nil ? ["rounded"] : [])
            let style = styles.count < 2 ? styles.map { ", style=\($0)" }.joined() : ", style=\"\(styles.joined(separator: ","))\""
            lines.append("  \(Self.dotQuoted(node.id.rawValue)) [label=\(Self.dotQuoted(label))\(style)];")
        }
        for node in nodes {
            for (edge, dependency) in dependencies[node.index].enumerated() {
                // A need found from files is dashed: no `needs` entry wrote it.
                let style = isFoundFromFiles(node: node.index, edge: edge) ? " [style=dashed]" : ""
                lines.append("  \(Self.dotQuoted(nodes[dependency].id.rawValue)) -> \(Self.dotQuoted(node.id.rawValue))\(style);")
            }
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// A DOT double-quoted string. Backslashes are doubled too: in a label `\l` or `\N` would otherwise
    /// mean something, and a trailing backslash would swallow the closing quote.
    static func dotQuoted(_ text: String) -> String {
        // Ids and queue names almost never need escaping; skip the character walk for them.
        if !text.utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 < 0x20 }) {
            return "\"\(text)\""
        }
        var quoted = "\""
        for character in text {
            switch character {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r", "\r\n": quoted += "\\n"
            default: quoted.append(character)
            }
        }
        return quoted + "\""
    }
}
