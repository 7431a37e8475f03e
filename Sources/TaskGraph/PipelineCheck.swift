import JobGraphBasics
import PipelineModel

/// Loads a pipeline file and builds its task graph: everything `validate`, `graph`, `list` and
/// `run --dry-run` check before they print anything.
public enum PipelineCheck {
    /// Loads and checks the pipeline at `path`, then builds its graph.
    /// - Parameters:
    ///   - path: the file as the user typed it; diagnostics carry this spelling.
    ///   - variableOverrides: `--var NAME=VALUE` values, replacing the file's `vars`.
    ///   - variableCommands: runs the commands of `sh` variables; `nil`, as `validate` does, runs none.
    ///   - diagnostics: receives every problem found, from YAML syntax to dependency cycles.
    /// - Returns: the graph, or `nil` when any error was found.
    public static func graph(
        contentsOf path: String, variableOverrides: [String: String] = [:], variableCommands: VariableCommandRunner? = nil,
        diagnostics: inout Diagnostics
    ) -> TaskGraph? {
        guard let pipeline = PipelineLoader.load(
            contentsOf: path, variableOverrides: variableOverrides, variableCommands: variableCommands, diagnostics: &diagnostics)
        else { return nil }
        return TaskGraph.build(pipeline, diagnostics: &diagnostics)
    }

    /// Checks a pipeline file's bytes, as `graph(contentsOf:)` checks a file; `file` names them in diagnostics.
    public static func graph(
        _ bytes: [UInt8], file: String, variableOverrides: [String: String] = [:], diagnostics: inout Diagnostics
    ) -> TaskGraph? {
        guard let pipeline = PipelineLoader.load(
            bytes, file: file, variableOverrides: variableOverrides, diagnostics: &diagnostics)
        else { return nil }
        return TaskGraph.build(pipeline, diagnostics: &diagnostics)
    }

    /// Checks pipeline text held in memory, as `graph(contentsOf:)` checks a file; for tests and tools.
    /// - Parameters:
    ///   - yaml: the pipeline's text.
    ///   - file: the name diagnostics give the text.
    ///   - variableOverrides: `--var NAME=VALUE` values, replacing the file's `vars`.
    ///   - diagnostics: receives every problem found.
    /// - Returns: the graph, or `nil` when any error was found.
    public static func graph(
        yaml: String, file: String = "pipeline.yaml", variableOverrides: [String: String] = [:],
        diagnostics: inout Diagnostics
    ) -> TaskGraph? {
        guard let pipeline = PipelineLoader.load(
            yaml: yaml, file: file, variableOverrides: variableOverrides, diagnostics: &diagnostics)
        else { return nil }
        return TaskGraph.build(pipeline, diagnostics: &diagnostics)
    }
}
