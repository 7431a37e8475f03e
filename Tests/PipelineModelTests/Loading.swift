import JobGraphBasics
import PipelineModel
import Reporters

/// What loading some inline YAML gave: the pipeline (if no errors) and the rendered diagnostics.
struct Loaded {
    var pipeline: Pipeline?
    var diagnostics: Diagnostics
    /// `FILE:LINE:COLUMN: error: message` lines, sorted, as `jobgraph validate` prints them.
    var lines: [String] { DiagnosticPrinter().render(diagnostics) }
    /// The messages alone, for tests about wording rather than position.
    var messages: [String] { diagnostics.sorted.map(\.message) }

    func task(_ id: String) -> TaskSpec? { pipeline?.tasks.first { $0.id.rawValue == id } }
}

func load(_ yaml: String, variableOverrides: [String: String] = [:]) -> Loaded {
    var diagnostics = Diagnostics()
    let pipeline = PipelineLoader.load(yaml: yaml, variableOverrides: variableOverrides, diagnostics: &diagnostics)
    return Loaded(pipeline: pipeline, diagnostics: diagnostics)
}

/// A one-task pipeline whose task has `body` (indented by four spaces, one key per line).
func loadTask(_ body: String, vars: String = "") -> Loaded {
    let indented = body.split(separator: "\n", omittingEmptySubsequences: false)
        .map { $0.isEmpty ? "" : "    " + $0 }.joined(separator: "\n")
    let variables = vars.isEmpty ? "" : "vars:\n" + vars.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") + "\n"
    return load("version: 1\n\(variables)tasks:\n  job:\n\(indented)\n")
}

extension Template {
    /// The variable placeholders as `name@line:column`, for compact expectations.
    var placeholders: [String] {
        segments.compactMap { segment in
            guard case .variable(let path, let location) = segment else { return nil }
            return "\(path.joined(separator: "."))@\(location.line):\(location.column)"
        }
    }
}
