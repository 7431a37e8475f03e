import JobGraphBasics
import YAMLNodes

extension Condition {
    /// The keys of one entry of `conditions:`.
    static let conditionKeys = KeySet(["file_exists", "env", "command", "reachable"])
    /// The keys of a service's `ready:`; `env` cannot change while a service starts, so it is not one.
    static let readyKeys = KeySet(["reachable", "file_exists", "command"])

    /// Decodes `conditions:`, a list of one-key mappings (contract: "conditions").
    static func decodeList(_ node: YAMLNode, item: ItemScope, decoder: inout NodeDecoder) -> [Condition]? {
        guard let list = node.sequence else {
            let hint = node.mapping != nil ? "; write each as a list item, like '- env: HOME'" : ""
            decoder.error("expected a list of conditions for 'conditions', found \(NodeDecoder.found(node))\(hint)", at: node)
            return nil
        }
        var conditions: [Condition] = []
        var isValid = true
        for element in list {
            guard let entries = element.mapping else {
                decoder.error(
                    "expected a condition such as '- file_exists: PATH' in 'conditions', found \(NodeDecoder.found(element)); "
                        + "a condition is one of \(Suggestion.list(conditionKeys.ordered))",
                    at: element)
                isValid = false
                continue
            }
            if let condition = decode(entries, at: element, allowed: conditionKeys, owner: "a condition", item: item, decoder: &decoder) {
                conditions.append(condition)
            } else {
                isValid = false
            }
        }
        return isValid ? conditions : nil
    }

    /// Decodes a one-key mapping such as `{reachable: 127.0.0.1:5432}`.
    static func decode(
        _ entries: [YAMLMappingEntry], at node: YAMLNode, allowed: KeySet, owner: String, item: ItemScope,
        decoder: inout NodeDecoder
    ) -> Condition? {
        let known = decoder.knownEntries(entries, allowed: allowed, in: owner)
        guard known.count == entries.count else { return nil }
        guard let first = known.first else {
            decoder.error("expected one of \(Suggestion.list(allowed.ordered)) in \(owner), found an empty mapping", at: node)
            return nil
        }
        if known.count > 1 {
            let both = "'\(first.key)' and '\(known[1].key)' are both given"
            // Only `conditions:` can hold several; a service has exactly one way to be ready.
            let message = allowed.contains("env")
                ? "a condition has one key, but \(both); write each as its own list item"
                : "\(owner) takes one condition, but \(both)"
            decoder.error(message, at: known[1].entry.key)
            return nil
        }
        let value = first.entry.value
        switch first.key {
        case "file_exists":
            return decoder.nonEmptyTemplate(value, expected: "a path", for: "file_exists", item: item).map(Condition.fileExists)
        case "command":
            return decoder.nonEmptyTemplate(value, expected: "a shell command", for: "command", item: item).map(Condition.command)
        case "env":
            guard let name = decoder.nonEmptyText(value, expected: "an environment variable name", for: "env") else { return nil }
            guard EnvironmentEntry.isValidName(name) else {
                decoder.error("invalid environment variable name '\(NodeDecoder.shortened(name))' for 'env'; it may not contain '='", at: value)
                return nil
            }
            return .environmentSet(name)
        default:
            guard let text = decoder.nonEmptyText(value, expected: "an address like '127.0.0.1:5432'", for: "reachable") else { return nil }
            return reachable(text, at: value, decoder: &decoder)
        }
    }

    /// `host:port`, with IPv6 hosts in brackets (`[::1]:5432`), port 1…65535.
    private static func reachable(_ text: String, at node: YAMLNode, decoder: inout NodeDecoder) -> Condition? {
        let shown = NodeDecoder.shortened(text)
        guard let colon = text.lastIndex(of: ":") else {
            decoder.error("invalid address '\(shown)' for 'reachable'; expected 'host:port', like '127.0.0.1:5432'", at: node)
            return nil
        }
        var host = Substring(text[..<colon])
        let portText = text[text.index(after: colon)...]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty, !host.contains(" ") else {
            decoder.error("invalid address '\(shown)' for 'reachable'; expected 'host:port', like '127.0.0.1:5432'", at: node)
            return nil
        }
        guard let port = Int(portText), (1...65535).contains(port) else {
            decoder.error("invalid port '\(NodeDecoder.shortened(String(portText)))' in 'reachable'; expected a number from 1 to 65535", at: node)
            return nil
        }
        return .reachable(host: String(host), port: port)
    }
}
