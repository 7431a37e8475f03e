import PipelineModel
import TaskGraph

/// What a run of `graph` would decide for each task before it starts, and why: the dry run's reasons
/// and `explain`'s. It makes the Runner's own pre-pass (`UpToDatePrepass`) over the same resolved work,
/// so what it says is what the run then does.
public struct RunForecast: Sendable {
    /// Per graph node, in graph order.
    public let reasons: [RunReason]

    /// - Parameters:
    ///   - configuration: as the run would get it (`force`, the environment, the folders).
    ///   - batch: up-to-date checks against the state the run would find; use one that writes nothing.
    public init(graph: TaskGraph, configuration: RunConfiguration, batch: any UpToDateBatchChecking) {
        let layout = QueueLayout(graph: graph, jobs: configuration.jobs, processorCount: configuration.processorCount)
        let tasks = graph.nodes.map { RunTask(node: $0, graph: graph, queue: layout.queueOfTask[$0.index]) }
        let resolver: WorkResolver
        do throws(TemplateError) {
            resolver = try WorkResolver(graph: graph, configuration: configuration)
        } catch {
            // The pipeline's `env` does not render: every task fails at its start with that error.
            reasons = tasks.map { _ in .unresolvable(error.message) }
            return
        }
        if configuration.force {
            batch.finish()
            reasons = UpToDatePrepass.forcedReasons(graph: graph, tasks: tasks)
            return
        }
        reasons = UpToDatePrepass(graph: graph, tasks: tasks, resolver: resolver, batch: batch).reasons
    }
}
