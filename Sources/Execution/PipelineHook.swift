import PipelineModel

/// The pipeline's own completion hook (`on_success` / `on_failure` at the top level), run once every task
/// has ended: in the pipeline's folder and environment, its output logged under its own name.
struct PipelineHook: Sendable {
    /// `on_success` or `on_failure`: the name its output and log go under.
    var id: TaskID
    /// The command, rendered and quoted.
    var command: String

    /// The hook that applies to a run that failed (or was stopped) or not; `nil` when the pipeline has none.
    init?(of pipeline: Pipeline, runFailed: Bool) {
        let variables = Dictionary(pipeline.variables.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
        // The loader checked the template's names, so rendering can only fail on a value it cannot quote.
        guard let hook = runFailed ? pipeline.onFailure : pipeline.onSuccess,
              let command = try? hook.rendered(in: TemplateContext(variables: variables), as: .shellQuoted)
        else { return nil }
        id = TaskID(runFailed ? "on_failure" : "on_success")
        self.command = command
    }
}
