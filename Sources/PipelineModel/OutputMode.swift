import YAMLNodes

/// How the console shows what tasks print: `output:` at the top of the file, or `--output`.
///
/// Logs under `.jobgraph/logs` are the same in every mode; only the console differs.
public enum OutputMode: String, CaseIterable, Sendable {
    /// Each line as it comes, prefixed by the task id (`build | line`): the default.
    case prefixed
    /// A task's whole output as one block when its attempt ends, under a line with its id, state and
    /// duration, as go-task's `output: group` and GitHub Actions' log groups do.
    case grouped
    /// Each line as it comes, as the task printed it.
    case interleaved
}

extension Pipeline {
    /// Decodes the top-level `output:` value; a null leaves the default.
    static func decodeOutputMode(_ node: YAMLNode, decoder: inout NodeDecoder) -> OutputMode? {
        guard node.scalar?.isNull != true else { return nil }
        return decoder.choice(node, for: "output", noun: "output mode")
    }
}
