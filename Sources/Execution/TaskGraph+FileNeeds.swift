import JobGraphBasics
import PipelineModel
import TaskGraph

extension TaskGraph {
    /// The graph with the needs its tasks' files imply: a task that reads a path another declares in
    /// `outputs` (or downloads, or filters to) needs it (docs/pipeline.md, "Dependencies found from files").
    ///
    /// Paths are compared after templating, per item, joined to each task's folder. A path that cannot be
    /// rendered yet (a param before it is given, a dynamic fan-out's `{{ item }}`) takes no part; the run
    /// reports it where it always did. An `!` exclusion names no file a task reads.
    /// - Parameters:
    ///   - pipelineDirectory: the pipeline's folder, absolute.
    ///   - warnOverlaps: warn where an input glob and an output glob may name the same files (`validate`).
    /// - Returns: the graph, or `nil` when the inferred needs close a cycle (reported in `diagnostics`).
    public func addingFileNeeds(pipelineDirectory: String, warnOverlaps: Bool = false, diagnostics: inout Diagnostics) -> TaskGraph? {
        guard pipeline.tasks.contains(where: { !$0.outputs.isEmpty || $0.action.writesAFile }) else { return self }
        let configuration = RunConfiguration(
            jobs: 1, pipelineDirectory: pipelineDirectory, stateDirectory: pipelineDirectory, environment: [:], processorCount: 1)
        // The pipeline's `env` failing to render fails the run later, with its own message.
        guard let resolver = try? WorkResolver(graph: self, configuration: configuration) else { return self }
        let paths = nodes.map { node -> NodePaths? in
            let task = RunTask(node: node, graph: self, queue: 0)
            guard let directory = try? resolver.workingDirectory(for: task) else { return nil }
            let context = resolver.context(for: task)
            func rendered(_ templates: [(Template, key: String)]) -> [DeclaredPath] {
                templates.compactMap { template, key in
                    guard let text = try? template.rendered(in: context, as: .path(key: key)), !text.hasPrefix("!") else { return nil }
                    return DeclaredPath(path: NormalPath(text, in: directory).description, location: template.location)
                }
            }
            let spec = task.spec
            var inputs = spec.inputs.map { ($0, key: "inputs") }
            var outputs = spec.outputs.map { ($0, key: "outputs") }
            switch spec.action {
            case .download(let download): outputs.append((download.destination, key: "to"))
            case .filter(let filter):
                inputs.append((filter.input, key: "input"))
                outputs.append((filter.output, key: "output"))
            case .run, .parallel: break
            }
            return NodePaths(inputs: rendered(inputs), outputs: rendered(outputs))
        }
        return addingFileNeeds(paths, shownRelativeTo: pipelineDirectory, warnOverlaps: warnOverlaps, diagnostics: &diagnostics)
    }
}

extension Action {
    /// Whether the step itself writes a file (a download, a filter), which counts as a declared output.
    var writesAFile: Bool {
        switch self {
        case .download, .filter: true
        case .run, .parallel: false
        }
    }
}
