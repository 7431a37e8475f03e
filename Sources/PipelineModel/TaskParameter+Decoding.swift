import JobGraphBasics
import YAMLNodes

extension TaskParameter {
    static let keys = KeySet(["type", "enum", "default", "required", "help"])

    /// `params:`, a mapping of names to `{type, enum, default, required, help}`; a default outside the
    /// enum or of the wrong type is reported at the default, as every mistake in the file is.
    static func decodeMapping(_ node: YAMLNode, owner: String, decoder: inout NodeDecoder) -> [TaskParameter] {
        guard let entries = decoder.mapping(node, expected: "a mapping of parameter names to '{type, default, …}'", for: "params") else {
            return []
        }
        var parameters: [TaskParameter] = []
        for entry in entries {
            guard let name = entry.keyText, entry.key.scalar != nil else {
                decoder.error("expected a parameter name, found \(NodeDecoder.found(entry.key))", at: entry.key)
                continue
            }
            if let problem = Variable.nameProblem(name, noun: "parameter") {
                decoder.error(problem, at: entry.key)
                continue
            }
            var parameter = TaskParameter(name: name, location: entry.key.location)
            if entry.value.scalar?.isNull != true {
                guard let fields = decoder.mapping(entry.value, expected: "a mapping with 'type', 'default', 'help' …", for: name) else { continue }
                let known = decoder.knownEntries(fields, allowed: keys, in: "parameter '\(name)' of \(owner)")
                // The type first: the default and the enum are checked against it.
                if let type = known.first(where: { $0.key == "type" }), type.entry.value.scalar?.isNull != true {
                    parameter.kind = decoder.choice(type.entry.value, for: "type", noun: "parameter type") ?? .string
                }
                var defaultNode: YAMLNode?
                for field in known where field.key != "type" && field.entry.value.scalar?.isNull != true {
                    let value = field.entry.value
                    switch field.key {
                    case "enum":
                        let values = decoder.scalarList(value, expected: "a list of allowed values", for: "enum") ?? []
                        parameter.allowed = values.compactMap { $0.scalar?.text }
                        for (index, text) in (parameter.allowed ?? []).enumerated() {
                            var kindOnly = parameter
                            kindOnly.allowed = nil
                            if let problem = kindOnly.problem(with: text) {
                                decoder.error("'enum' of parameter '\(name)': \(problem)", at: values[index])
                            }
                        }
                    case "default":
                        parameter.defaultValue = decoder.text(value, expected: "a value", for: "default")
                        defaultNode = value
                    case "required":
                        parameter.isRequired = decoder.bool(value, for: "required") ?? false
                    case "help":
                        parameter.help = decoder.text(value, for: "help")
                    default:
                        break
                    }
                }
                if let defaultValue = parameter.defaultValue, let defaultNode {
                    if let problem = parameter.problem(with: defaultValue) {
                        decoder.error("'default' of parameter '\(name)': \(problem)", at: defaultNode)
                    } else if parameter.isRequired {
                        decoder.error("parameter '\(name)' is required and has a default; a default means it is never missing, so drop one", at: defaultNode)
                    }
                }
            }
            parameters.append(parameter)
        }
        return parameters
    }
}
