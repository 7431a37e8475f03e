import PipelineModel
import TaskGraph

/// Decides before a run, in one pass over the graph, every task that need not run: a task whose check
/// says up to date and whose needs are all up to date too. Such a task never takes a `--jobs` slot and
/// never executes; its transitions still reach the observers.
///
/// Why before the run: decided as each task started, a no-op rerun of 10,000 tasks still gave each one a
/// slot, an executing operation and a read transaction, and examined every shared file once per task
/// naming it (0.74 s, against ninja's 0.046 s). A task with a need that will run is left to the check at
/// its start, once that need has written its outputs: it *may* run.
struct UpToDatePrepass {
    /// Per task (graph node): the check's answer, for the tasks checked before the run; `nil` for the others.
    private(set) var answers: [UpToDateAnswer?]
    /// Per task: up to date, with every need up to date: it ends without running.
    private(set) var isUpToDate: [Bool]

    /// - Parameter tasks: the graph's nodes as the run tracks them, in graph order.
    init(graph: TaskGraph, tasks: [RunTask], resolver: WorkResolver, batch: any UpToDateBatchChecking) {
        answers = Array(repeating: nil, count: tasks.count)
        isUpToDate = Array(repeating: false, count: tasks.count)
        for index in graph.topologicalOrder where Self.isDecidable(tasks[index], node: graph.nodes[index]) {
            guard graph.dependencies[index].allSatisfy({ isUpToDate[$0] }) else { continue }
            let task = tasks[index]
            // A task whose templates do not render fails when it starts, with that error.
            guard let work = try? resolver.work(for: task, attempt: 1), let paths = try? resolver.declaredPaths(for: task)
            else { continue }
            let answer = batch.check(work, inputs: paths.inputs, outputs: paths.outputs,
                                     environmentNames: resolver.environmentNames(for: task))
            answers[index] = answer
            isUpToDate[index] = answer.isUpToDate
        }
        batch.finish()
    }

    /// Whether nothing but its check and its needs decides if the task runs: conditions are checked when
    /// its needs are done, a service and a dynamic fan-out always run, and `when: failure` or `always`
    /// tasks follow their needs' outcomes.
    static func isDecidable(_ task: RunTask, node: TaskNode) -> Bool {
        task.spec.conditions.isEmpty && task.spec.service == nil && !node.isDynamicFanOut && task.spec.when == .success
    }
}
