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
    ///   - outputCache: the run's output cache: a `cache: true` task that would run but whose key it holds
    ///     is forecast `restorable`; `nil` without one (`--no-cache`).
    public init(graph: TaskGraph, configuration: RunConfiguration, batch: any UpToDateBatchChecking,
                outputCache: (any OutputCaching)? = nil) {
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
        let prepass = UpToDatePrepass(graph: graph, tasks: tasks, resolver: resolver, batch: batch)
        reasons = outputCache.map { Self.restorable(prepass, graph: graph, tasks: tasks, cache: $0) } ?? prepass.reasons
    }

    /// The pass's reasons, with a checked `cache: true` task that would run and whose key the cache holds
    /// made `restorable`. Keys as the run makes them (`Runner.rememberCacheKey`): only tasks whose needs
    /// were all checked have an answer, so their needs' keys are known.
    private static func restorable(_ prepass: UpToDatePrepass, graph: TaskGraph, tasks: [RunTask],
                                   cache: any OutputCaching) -> [RunReason] {
        var reasons = prepass.reasons
        var keys = [String?](repeating: nil, count: tasks.count)
        for index in graph.topologicalOrder {
            guard let answer = prepass.answers[index] else { continue }
            let key = cache.key(for: tasks[index].spec, answer: answer, needKeys: graph.dependencies[index].map { keys[Int($0)] })
            keys[index] = key
            if let key, tasks[index].spec.isCached, reasons[index].decision == .runs, let origin = cache.origin(ofKey: key) {
                reasons[index] = .restorable(key: key, origin: origin)
            }
        }
        return reasons
    }
}
