import TaskGraph

extension NoOpReplay {
    /// What a run of `graph` sends when its pre-pass finds every task up to date, worked out without
    /// checking a task: the Plan's order with every task marked up to date, and the reason such a task
    /// carries. A build that ended with every task done records this for the rerun after it
    /// (`StateStore.recordReplay`), which then need not check every task to reach the same verdict.
    /// - Returns: `nil` when some task is not decided before a run (a service, a dynamic fan-out,
    ///   `conditions`, `when: failure` or `always`), or the graph is empty: no replay is recorded for those.
    public init?(everyTaskUpToDateIn graph: TaskGraph, configuration: RunConfiguration) {
        guard !graph.nodes.isEmpty else { return nil }
        let layout = QueueLayout(graph: graph, jobs: configuration.jobs, processorCount: configuration.processorCount)
        for node in graph.nodes {
            let task = RunTask(node: node, graph: graph, queue: layout.queueOfTask[node.index])
            guard UpToDatePrepass.isDecidable(task, node: node) else { return nil }
        }
        var plan = Plan(graph: graph, layout: layout, jobs: configuration.jobs, keepGoing: configuration.keepGoing)
        plan.markUpToDate(Array(repeating: true, count: graph.nodes.count))
        let transitions = plan.begin()
        // The Runner sends each task's three transitions in a row; anything else is not this replay's to repeat.
        guard transitions.count == 3 * graph.nodes.count else { return nil }
        let reason = RunReason.upToDate.description
        var tasks: [Task] = []
        tasks.reserveCapacity(graph.nodes.count)
        var position = 0
        while position < transitions.count {
            let index = transitions[position].task
            guard transitions[position] == Plan.Transition(task: index, from: .pending, to: .ready), transitions[position + 1] == Plan.Transition(task: index, from: .ready, to: .executing),
                  transitions[position + 2] == Plan.Transition(task: index, from: .executing, to: .upToDate) else { return nil }
            tasks.append(Task(id: graph.nodes[index].id, queue: layout.names[layout.queueOfTask[index]], reason: reason))
            position += 3
        }
        // A run that ran nothing has no critical path (`Runner.criticalPathTaken` finds no task that ended by running).
        self.init(pipelineFile: graph.pipeline.file, jobs: configuration.jobs, tasks: tasks, criticalPath: [])
    }
}
