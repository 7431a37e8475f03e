import JobGraphBasics
import YAMLNodes

extension Include {
    static let keys = KeySet(["file", "dir", "vars"])

    /// `include:`, a mapping of names to a file, or to `{file, dir, vars}` (docs/pipeline.md, "Includes").
    static func decodeMapping(_ node: YAMLNode, decoder: inout NodeDecoder) -> [Include] {
        guard let entries = decoder.mapping(node, expected: "a mapping of names to pipeline files", for: "include") else { return [] }
        var includes: [Include] = []
        for entry in entries {
            guard let name = entry.keyText, entry.key.scalar != nil else {
                decoder.error("expected an include name, found \(NodeDecoder.found(entry.key))", at: entry.key)
                continue
            }
            guard TaskID.syntax(of: name) == .plain else {
                decoder.error(
                    "invalid include name '\(NodeDecoder.shortened(name))'; it prefixes task ids, so use letters, digits, '-', '_' and '.'",
                    at: entry.key)
                continue
            }
            if let include = decode(entry.value, name: name, at: entry.key.location, decoder: &decoder) { includes.append(include) }
        }
        return includes
    }

    private static func decode(_ node: YAMLNode, name: String, at location: SourceLocation, decoder: inout NodeDecoder) -> Include? {
        if node.scalar != nil {
            guard let file = decoder.nonEmptyText(node, expected: "a pipeline file", for: name) else { return nil }
            return Include(name: name, location: location, file: Located(file, at: node.location), directory: nil, variables: [])
        }
        guard let fields = decoder.mapping(node, expected: "a pipeline file or a mapping with 'file', 'dir' and 'vars'", for: name)
        else { return nil }
        var file: Located<String>?
        var directory: String?
        var variables: [(name: String, value: Template, location: SourceLocation)] = []
        var isValid = true
        let known = decoder.knownEntries(fields, allowed: keys, in: "include '\(name)'")
        if known.count != fields.count { isValid = false }
        for field in known {
            let value = field.entry.value
            switch field.key {
            case "file":
                if let text = decoder.nonEmptyText(value, expected: "a pipeline file", for: "file") {
                    file = Located(text, at: value.location)
                } else {
                    isValid = false
                }
            case "dir":
                directory = decoder.nonEmptyText(value, expected: "a directory", for: "dir")
                if directory == nil { isValid = false }
            default:
                guard value.scalar?.isNull != true,
                      let entries = decoder.mapping(value, expected: "a mapping of names to values", for: "vars") else { continue }
                for variable in entries {
                    guard let variableName = variable.keyText, variable.key.scalar != nil else {
                        decoder.error("expected a variable name, found \(NodeDecoder.found(variable.key))", at: variable.key)
                        isValid = false
                        continue
                    }
                    if let problem = Variable.nameProblem(variableName) {
                        decoder.error(problem, at: variable.key)
                        isValid = false
                        continue
                    }
                    // The value is the including file's: it may use that file's variables.
                    guard let text = Pipeline.scalarText(variable.value, describedAs: "'\(variableName)' in 'vars'", decoder: &decoder),
                          let template = TemplateParser.parse(text, in: variable.value, item: .none, decoder: &decoder)
                    else {
                        isValid = false
                        continue
                    }
                    variables.append((variableName, template, variable.key.location))
                }
            }
        }
        guard let file else {
            if isValid { decoder.error("missing 'file' in include '\(name)'; give the pipeline file to include", at: node) }
            return nil
        }
        return isValid ? Include(name: name, location: location, file: file, directory: directory, variables: variables) : nil
    }
}
