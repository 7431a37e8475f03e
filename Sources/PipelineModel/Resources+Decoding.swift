import JobGraphBasics
import YAMLNodes

extension Resources {
    /// Where a `resources:` mapping is written, for messages.
    enum Level {
        case topLevel
        case task(String)
        case defaults

        var owner: String {
            switch self {
            case .topLevel: "the top-level 'resources'"
            case .task(let id): "'resources' of task '\(id)'"
            case .defaults: "'resources' of 'defaults'"
            }
        }
    }

    /// Decodes a `resources:` mapping of names to amounts, reporting every problem; `nil` after any.
    static func decode(_ node: YAMLNode, level: Level, decoder: inout NodeDecoder) -> Resources? {
        guard let entries = decoder.mapping(node, expected: "a mapping of resource names to amounts such as '{cpus: 4, mem: 8G}'", for: "resources")
        else { return nil }
        var resources = Resources(location: node.location)
        var isValid = true
        for entry in entries {
            guard let name = entry.keyText, entry.key.scalar != nil, Resources.isValidName(name) else {
                decoder.error(
                    "invalid resource name \(NodeDecoder.found(entry.key)) in \(level.owner); use a letter, then letters, digits, '_' or '-'",
                    at: entry.key)
                isValid = false
                continue
            }
            if case .topLevel = level, name == cpus {
                decoder.error("the total of 'cpus' is '--jobs'; remove 'cpus' from \(level.owner)", at: entry.key)
                isValid = false
                continue
            }
            if resources[name] != nil {
                decoder.error("'\(name)' is given twice in \(level.owner)", at: entry.key)
                isValid = false
                continue
            }
            guard let scalar = entry.value.scalar, !scalar.isNull else {
                decoder.error("expected an amount for '\(name)' in \(level.owner), found \(NodeDecoder.found(entry.value))", at: entry.value)
                isValid = false
                continue
            }
            switch value(scalar.text, of: name) {
            case .success(let amount):
                resources.amounts.append(Amount(name: name, value: amount, location: entry.value.location))
            case .failure(let error):
                decoder.error("invalid amount '\(NodeDecoder.shortened(scalar.text))' for '\(name)' in \(level.owner); \(error.message)", at: entry.value)
                isValid = false
            }
        }
        return isValid ? resources : nil
    }
}
