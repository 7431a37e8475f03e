import JobGraphBasics
import PipelineModel

/// What `{{ … }}` placeholders can name while a task is resolved: the vars, `item` in a fan-out, and `attempt`.
public struct TemplateContext: Sendable {
    public var variables: [String: String]
    public var item: ItemValue?
    /// `{{ index }}`: the item's 0-based position in its fan-out.
    public var index: Int?
    /// The folder a templated path must stay in (the pipeline's). Absolute, or `.` where a caller has none.
    public var pipelineDirectory: String
    /// The folder a relative path is joined to (the task's `cwd`; the pipeline's for `cwd` itself).
    public var workingDirectory: String
    /// `{{ attempt }}`: 1 for the first attempt.
    public var attempt = 1

    public init(variables: [String: String], item: ItemValue? = nil, index: Int? = nil, pipelineDirectory: String = ".",
                workingDirectory: String? = nil) {
        self.variables = variables
        self.item = item
        self.index = index
        self.pipelineDirectory = pipelineDirectory
        self.workingDirectory = workingDirectory ?? pipelineDirectory
    }
}

/// One fan-out item: a string from a list, or an object read from a JSON file at run time.
public enum ItemValue: Sendable, Equatable {
    case string(String)
    case object([String: String])
}

/// Why a template could not be turned into text for this task.
public struct TemplateError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// How a substituted value must be treated where it lands.
public enum Substitution: Sendable {
    /// As is (a URL, an environment value).
    case plain
    /// Quoted for `/bin/sh`, so it can never become shell syntax (contract: "Templating").
    case shellQuoted
    /// The path of key `key` (`to`, `cwd` …): once joined and normalised, it may not leave the pipeline's
    /// folder (contract: "A value substituted into a path"); see `PathConfinement`.
    case path(key: String)
}

extension Template {
    /// The template with its placeholders replaced.
    /// - Throws: `TemplateError` when a value is missing or would send a path outside the pipeline's folder.
    public func rendered(in context: TemplateContext, as substitution: Substitution = .plain) throws(TemplateError) -> String {
        if let literal = literalText { return literal }
        var text = ""
        var values: [(name: String, value: String)] = []
        for segment in segments {
            switch segment {
            case .literal(let literal):
                text += literal
            case .variable(let path, _):
                let value = try context.value(of: path)
                switch substitution {
                case .shellQuoted:
                    text += ShellQuoting.quoted(value)
                case .plain:
                    text += value
                case .path:
                    text += value
                    values.append((path.joined(separator: "."), value))
                }
            }
        }
        if case .path(let key) = substitution, !values.isEmpty {
            try PathConfinement(pipelineDirectory: context.pipelineDirectory)
                .check(text, of: self, values: values, key: key, in: context.workingDirectory)
        }
        return text
    }
}

extension TemplateContext {
    func value(of path: [String]) throws(TemplateError) -> String {
        let name = path.joined(separator: ".")
        if path.first == "item" {
            switch (item, path.count) {
            case (.string(let value)?, 1):
                return value
            case (.object(let fields)?, 2):
                if let value = fields[path[1]] { return value }
                throw TemplateError(message: "the item has no field '\(path[1])'")
            case (.object?, 1):
                throw TemplateError(message: "the item is an object; name one of its fields, as {{ item.name }}")
            default:
                throw TemplateError(message: "{{ \(name) }} does not fit this item")
            }
        }
        if path == ["attempt"] { return String(attempt) }
        // Outside a fan-out, `index` is an ordinary var (the loader saw to it).
        if path == ["index"], let index { return String(index) }
        guard path.count == 1, let value = variables[path[0]] else {
            throw TemplateError(message: "unknown variable '\(name)'")
        }
        return value
    }
}
