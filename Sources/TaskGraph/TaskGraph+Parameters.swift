import JobGraphBasics
import PipelineModel

/// The words after `jobgraph run`: task names, each followed by the `NAME=VALUE` values of its params
/// (docs/cli.md, "run").
public struct TaskArguments: Sendable {
    /// The task names, in the order given.
    public var names: [String]
    /// For each name in `names`, the `NAME=VALUE` words that follow it, in order.
    public var values: [[(name: String, value: String)]]

    /// Splits `words`: one of the form `NAME=VALUE` (a parameter name, `=`, anything) belongs to the
    /// task named just before it; one before any task name is an error added to `diagnostics`.
    public init(_ words: [String], diagnostics: inout Diagnostics) {
        names = []
        values = []
        for word in words {
            guard let assignment = Self.assignment(word) else {
                names.append(word)
                values.append([])
                continue
            }
            guard !values.isEmpty else {
                diagnostics.error(
                    "'\(word)' comes before any task name; put a task's parameters after its name ('jobgraph run TASK \(word)'), or set a variable with '--var \(word)'",
                    at: nil)
                continue
            }
            values[values.count - 1].append(assignment)
        }
    }

    /// `NAME` and `VALUE` of a `NAME=VALUE` word whose name could be a parameter's; `nil` for a task name.
    static func assignment(_ word: String) -> (name: String, value: String)? {
        guard let equals = word.firstIndex(of: "=") else { return nil }
        let name = String(word[..<equals])
        guard let first = name.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic || first == "_",
              name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") })
        else { return nil }
        return (name, String(word[word.index(after: equals)...]))
    }
}

extension TaskGraph {
    /// The values of the task's params for this run, by name; `nil` for a task without params. A graph no
    /// command line bound gives each param its default as written, or the empty string.
    public func parameterValues(of task: TaskSpec) -> [String: String]? {
        if let values = parameterValues[task.id] { return values }
        guard !task.parameters.isEmpty else { return nil }
        var values: [String: String] = [:]
        for parameter in task.parameters { values[parameter.name] = parameter.defaultValue ?? "" }
        return values
    }

    /// This graph with the values of its tasks' params bound: those given after each task's name, else
    /// the defaults; a relative `path` given is made absolute against `invocationDirectory`, a default one
    /// against `pipelineDirectory` (docs/pipeline.md, "Task parameters").
    ///
    /// Every task of the graph with a `required` param must have been given it, a task that runs only
    /// because another needs it too.
    /// - Parameters:
    ///   - arguments: the names (already selected) and their values.
    ///   - diagnostics: receives, with no location, an unknown name (with a near match), a value of the
    ///     wrong type or outside the `enum`, and each missing required param.
    /// - Returns: the bound graph, or `nil` after an error.
    public func binding(
        _ arguments: TaskArguments, invocationDirectory: String, pipelineDirectory: String, diagnostics: inout Diagnostics
    ) -> TaskGraph? {
        let errorCount = diagnostics.errorCount
        var given: [TaskID: [String: String]] = [:]
        // Given with a bad value: reported as such, not again as missing.
        var refused: Set<String> = []
        for (name, values) in zip(arguments.names, arguments.values) where !values.isEmpty {
            guard let range = indices(named: resolvedName(name)), let node = nodes[range].first else { continue }  // selection reported it
            let spec = node.spec
            for (parameterName, value) in values {
                guard let parameter = spec.parameters.first(where: { $0.name == parameterName }) else {
                    let declared = spec.parameters.map(\.name)
                    let advice = declared.isEmpty ? "; it takes none"
                        : Suggestion.closest(to: parameterName, in: declared).map { "; did you mean '\($0)'?" }
                            ?? "; it takes \(Suggestion.list(declared))"
                    let variable = pipeline.variables.contains { $0.name == parameterName }
                        ? " ('\(parameterName)' is a variable: set it with '--var \(parameterName)=…')" : ""
                    diagnostics.error("unknown parameter '\(parameterName)' of task '\(spec.id)'\(advice)\(variable)", at: nil)
                    continue
                }
                if let problem = parameter.problem(with: value) {
                    diagnostics.error("parameter '\(parameterName)' of task '\(spec.id)': \(problem)", at: nil)
                    refused.insert("\(spec.id.rawValue)\u{0}\(parameterName)")
                    continue
                }
                given[spec.id, default: [:]][parameterName] = parameter.value(of: value, relativeTo: invocationDirectory)
            }
        }
        var bound = self
        var seen = Set<TaskID>()
        for node in nodes where !node.spec.parameters.isEmpty && seen.insert(node.baseID).inserted {
            let spec = node.spec
            var values = given[spec.id] ?? [:]
            for parameter in spec.parameters where values[parameter.name] == nil {
                if let defaultValue = parameter.defaultValue {
                    values[parameter.name] = parameter.value(of: defaultValue, relativeTo: pipelineDirectory)
                } else if parameter.isRequired, !refused.contains("\(spec.id.rawValue)\u{0}\(parameter.name)") {
                    let help = parameter.help.map { " (\($0))" } ?? ""
                    diagnostics.error(
                        "task '\(spec.id)' needs its required parameter '\(parameter.name)'\(help); give it after the task's name: 'jobgraph run \(spec.id) \(parameter.name)=…'",
                        at: nil)
                } else if !parameter.isRequired {
                    values[parameter.name] = ""
                }
            }
            bound.parameterValues[spec.id] = values
        }
        return diagnostics.errorCount > errorCount ? nil : bound
    }
}
