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
///
/// The dry run and `explain` make the same pass (`RunForecast`), so they say what the run then does.
struct UpToDatePrepass {
    /// Per task (graph node): the check's answer, for the tasks checked before the run; `nil` for the others.
    private(set) var answers: [UpToDateAnswer?]
    /// Per task: up to date, with every need up to date: it ends without running.
    private(set) var isUpToDate: [Bool]
    /// Per task: the answer's cause for those checked, else why its check waits for its start.
    private(set) var reasons: [RunReason]

    /// - Parameters:
    ///   - tasks: the graph's nodes as the run tracks them, in graph order.
    ///   - foundUpToDate: told of each task found up to date, as soon as it is, with its answer.
    init(graph: TaskGraph, tasks: [RunTask], resolver: WorkResolver, batch: any UpToDateBatchChecking,
         foundUpToDate: (Int, UpToDateAnswer) -> Void = { _, _ in }) {
        answers = Array(repeating: nil, count: tasks.count)
        isUpToDate = Array(repeating: false, count: tasks.count)
        reasons = Array(repeating: .neverRan, count: tasks.count)
        for index in graph.topologicalOrder {
            let task = tasks[index]
            if let reason = Self.reasonDecidedAtStart(task, node: graph.nodes[index]) {
                reasons[index] = reason
                continue
            }
            if let need = graph.dependencies[index].first(where: { !isUpToDate[$0] }) {
                reasons[index] = reasons[need].decision == .mayRun ? .needMayRun(tasks[need].id) : .needWillRun(tasks[need].id)
                continue
            }
            // A task whose templates do not render fails when it starts, with that error.
            let resolved: (work: TaskWork, inputs: [String], outputs: [String])
            do throws(TemplateError) {
                resolved = try resolver.checkedWork(for: task)
            } catch {
                reasons[index] = .unresolvable(error.message)
                continue
            }
            let answer = batch.check(resolved.work, inputs: resolved.inputs, outputs: resolved.outputs,
                                     environmentNames: resolver.environmentNames(for: task))
            answers[index] = answer
            isUpToDate[index] = answer.isUpToDate
            reasons[index] = answer.cause
            if answer.isUpToDate { foundUpToDate(index, answer) }
        }
        batch.finish()
    }

    /// Whether nothing but its check and its needs decides if the task runs: conditions are checked when
    /// its needs are done, a service and a dynamic fan-out always run, and `when: failure` or `always`
    /// tasks follow their needs' outcomes.
    static func isDecidable(_ task: RunTask, node: TaskNode) -> Bool {
        reasonDecidedAtStart(task, node: node) == nil
    }

    /// The reasons under `--force`, which runs every task without a check: those that are not decidable
    /// before the run still wait for their start.
    static func forcedReasons(graph: TaskGraph, tasks: [RunTask]) -> [RunReason] {
        graph.nodes.indices.map { index in reasonDecidedAtStart(tasks[index], node: graph.nodes[index]) ?? .forced }
    }

    /// Why a task that is not decidable before the run waits for its start; `nil` for one that is.
    static func reasonDecidedAtStart(_ task: RunTask, node: TaskNode) -> RunReason? {
        reasonDecidedAtStart(task.spec, node: node)
    }

    /// The same, for a task with this spec (a graph node's, or a fan-out item's).
    static func reasonDecidedAtStart(_ spec: TaskSpec, node: TaskNode) -> RunReason? {
        if spec.service != nil { return .service }
        if node.isDynamicFanOut { return .fanOutAtRunTime }
        switch spec.when {
        case .failure: return .runsOnFailure
        case .always: return .runsAlways
        case .success: break
        }
        return spec.conditions.isEmpty ? nil : .conditionsDecide
    }
}
