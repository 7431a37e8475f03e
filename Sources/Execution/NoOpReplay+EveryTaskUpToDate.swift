import TaskGraph

extension NoOpReplay {
    /// What a run of `graph` sends when its pre-pass finds every task up to date, worked out without
    /// checking a task: the order in which the Plan ends such tasks, and the reason each carries. A build
    /// that ended with every task done records this for the rerun after it (`StateStore.recordReplay`),
    /// which then need not check every task to reach the same verdict.
    /// - Returns: `nil` when some task is not decided before a run (a service, a dynamic fan-out,
    ///   `conditions`, `when: failure` or `always`), or the graph is empty: no replay is recorded for those.
    public init?(everyTaskUpToDateIn graph: TaskGraph, configuration: RunConfiguration) {
        guard !graph.nodes.isEmpty else { return nil }
        for node in graph.nodes {
            guard UpToDatePrepass.reasonDecidedAtStart(node.spec, node: node) == nil else { return nil }
        }
        let layout = QueueLayout(graph: graph, jobs: configuration.jobs, processorCount: configuration.processorCount)
        let reason = RunReason.upToDate.description
        var tasks: [Task] = []
        tasks.reserveCapacity(graph.nodes.count)
        for index in Self.orderEndingEveryTaskUpToDate(graph) {
            tasks.append(Task(id: graph.nodes[index].id, queue: layout.names[layout.queueOfTask[index]], reason: reason))
        }
        // A run that ran nothing has no critical path (`Runner.criticalPathTaken` finds no task that ended by running).
        self.init(pipelineFile: graph.pipeline.file, jobs: configuration.jobs, tasks: tasks, criticalPath: [])
    }

    /// The order `Plan.begin()` ends the tasks in when every one is marked up to date: each task without
    /// needs in turn, then, last in first out, each task whose last need just ended (dependents in node
    /// order, as the Plan keeps them). Why not a `Plan`: it holds a row per task beside the graph, and at
    /// the end of a build of 100,000 tasks its 20 MB came on top of the run's peak.
    static func orderEndingEveryTaskUpToDate(_ graph: TaskGraph) -> [Int] {
        var unfinishedNeeds = graph.dependencies.map { Int32($0.count) }
        var order: [Int] = []
        order.reserveCapacity(graph.nodes.count)
        var toEnd: [Int] = []
        for root in graph.nodes.indices where graph.dependencies[root].isEmpty {
            toEnd.append(root)
            while let index = toEnd.popLast() {
                order.append(index)
                for dependent in graph.dependents[index] {
                    unfinishedNeeds[dependent] -= 1
                    if unfinishedNeeds[dependent] == 0 { toEnd.append(dependent) }
                }
            }
        }
        return order
    }
}
