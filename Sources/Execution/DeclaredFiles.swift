import PipelineModel
import TaskGraph

/// The files each task of a graph declares it reads and writes (`inputs`, `outputs`, and what a download
/// or filter step names), rendered as a run renders them: what watch mode watches. Pure.
public struct DeclaredFiles: Sendable {
    /// One task's patterns, relative to its folder.
    public struct Task: Sendable {
        public var id: TaskID
        /// The task's folder, absolute.
        public var directory: String
        public var inputs: [String]
        public var outputs: [String]

        public init(id: TaskID, directory: String, inputs: [String], outputs: [String]) {
            self.id = id
            self.directory = directory
            self.inputs = inputs
            self.outputs = outputs
        }
    }

    public var tasks: [Task]

    public init(tasks: [Task]) {
        self.tasks = tasks
    }

    /// - Parameters:
    ///   - graph: the selected tasks; a dynamic fan-out's items do not exist yet, so its own paths count
    ///     only where they do not name `{{ item }}`.
    ///   - configuration: gives the pipeline's folder.
    public init(graph: TaskGraph, configuration: RunConfiguration) {
        // A template that cannot be rendered fails its task when it runs, which reports it; here it
        // only means that task has nothing to watch.
        guard let resolver = try? WorkResolver(graph: graph, configuration: configuration) else {
            tasks = []
            return
        }
        tasks = graph.nodes.compactMap { node in
            let task = RunTask(node: node, graph: graph, queue: 0)
            guard let directory = try? resolver.workingDirectory(for: task),
                  let paths = try? resolver.declaredPaths(for: task) else { return nil }
            return Task(id: task.id, directory: directory, inputs: paths.inputs, outputs: paths.outputs)
        }
    }
}
