import PipelineModel
import TaskGraph

/// The run's queues: the implicit `default` queue (index 0) for tasks that name none, then the
/// pipeline's `queues` in file order, each with the limit it runs with.
public struct QueueLayout: Sendable {
    public let names: [String]
    /// Most tasks executing at once per queue: `max_concurrent` (else the CPU count), never above `jobs`.
    public let limits: [Int]
    public let qualities: [QualityOfService?]
    /// For each graph node, the index of its queue.
    public let queueOfTask: [Int]

    public init(graph: TaskGraph, jobs: Int, processorCount: Int) {
        let declared = graph.pipeline.queues
        var indexByName: [QueueName: Int] = [:]
        for (offset, queue) in declared.enumerated() { indexByName[queue.name] = offset + 1 }
        names = ["default"] + declared.map(\.name.rawValue)
        limits = [jobs] + declared.map { min($0.maxConcurrent ?? processorCount, jobs) }
        qualities = [nil] + declared.map(\.qos)
        queueOfTask = graph.nodes.map { node in node.spec.queue.flatMap { indexByName[$0.value] } ?? 0 }
    }
}

extension Plan {
    /// The Plan of a graph: its needs, `when` rules, priorities and remaining critical paths.
    /// - Parameter durations: expected seconds per node (from history); `nil` counts every task as 1.
    public init(graph: TaskGraph, layout: QueueLayout, jobs: Int, keepGoing: Bool, durations: [Double]? = nil) {
        let criticalPaths = durations.map { graph.criticalPathLengths(durations: $0) } ?? graph.criticalPathLengths()
        let tasks = graph.nodes.indices.map { index in
            let spec = graph.nodes[index].spec
            return Plan.Task(id: graph.nodes[index].id, queue: layout.queueOfTask[index], priority: spec.priority,
                             criticalPath: criticalPaths[index], when: spec.when, allowsFailure: spec.allowFailure,
                             needs: graph.dependencies[index])
        }
        self.init(tasks: tasks, jobs: jobs, queueLimits: layout.limits, keepGoing: keepGoing)
    }

    /// The order tasks would start if every task succeeded and took the same time: what `--dry-run` shows.
    public func startOrder() -> [Int] {
        var plan = self
        _ = plan.begin()
        var order: [Int] = []
        var running: [Int] = []
        var next = 0
        repeat {
            let started = plan.take()
            order += started
            running += started
            guard next < running.count else { break }
            _ = plan.record(running[next], .succeeded)
            next += 1
        } while true
        return order
    }
}
