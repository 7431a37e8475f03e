import Dispatch
import Foundation
import JobGraphBasics
import PipelineModel
import TaskGraph

/// Decides before a run, in one pass over the graph, every task that need not run: a task whose check
/// says up to date and whose needs are all up to date too. Such a task never takes a `--jobs` slot and
/// never executes; its transitions still reach the observers. The checks come first, all at once, on
/// every core.
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
        // Per task, whether a check before the run may find it up to date.
        enum Standing {
            /// Its condition, `always` or the like decides at its start (`reasonDecidedAtStart`).
            case decidedAtStart
            /// A need of its may run: left to the check at its start.
            case waitsForANeed
            /// Decided by its check, as is every need of its, which may each be up to date. Without a success
            /// on record it runs, and so may every task that needs it, whose checks are then left to their
            /// start: on a first run that is all but the first tasks (two thirds of the checks of the
            /// 2,000-sample dry run of Benchmarks/snakemake.sh were made only to be dropped).
            case checkable(hasSuccess: Bool)
        }
        var standings = Array(repeating: Standing.waitsForANeed, count: tasks.count)
        var candidates: [Int] = []
        for index in graph.topologicalOrder {
            if let reason = Self.reasonDecidedAtStart(tasks[index], node: graph.nodes[index]) {
                reasons[index] = reason
                standings[index] = .decidedAtStart
            } else if graph.dependencies[index].allSatisfy({ if case .checkable(hasSuccess: true) = standings[$0] { true } else { false } }) {
                standings[index] = .checkable(hasSuccess: batch.hasSuccess(of: tasks[index].id))
                candidates.append(index)
            }
        }
        // All of them checked at once, on every core, before their needs are known to be up to date: a check
        // reads only the store and the files, which no other check changes. Only the answers of tasks whose
        // needs turn out up to date are used below; for the others (downstream of a change) the check was
        // wasted, about 7 µs a task, against a millisecond at least to run each. Checked level by level
        // instead, the threads waited for each other at every level (a third of their time: perf, checked
        // no-op rerun of 10,000 layered tasks); on one thread the checks were three fifths of the
        // instructions of its main thread (callgrind).
        let lanes = batch.makeLanes(ProcessInfo.processInfo.activeProcessorCount)
        let ways = max(1, min(lanes.count, candidates.count / Self.tasksPerWay))
        // Last first: in the graph's order the tasks that gather many come last and cost the most (the one
        // over 2,000 samples' 4,001 files in Benchmarks/snakemake.sh), and a thread that took one at the
        // end would keep the others waiting for it.
        let outcomes = Array(candidates.reversed().mapConcurrently(ways: ways) { index, way in
            Self.check(tasks[index], resolver: resolver, lane: lanes[way])
        }.reversed())
        // What the lanes examined is taken in on another thread while the answers are walked, which do not
        // read it: for 10,000 tasks 50 M instructions, a third of what the pass left on its thread (callgrind).
        let merged = DispatchGroup()
        nonisolated(unsafe) let (mergingBatch, mergedLanes) = (batch, lanes)
        DispatchQueue.global().async(group: merged) { mergingBatch.merge(mergedLanes) }
        var outcome = 0
        for index in graph.topologicalOrder {
            var candidate: Result<UpToDateAnswer, TemplateError>?
            switch standings[index] {
            case .decidedAtStart: continue
            case .waitsForANeed: candidate = nil
            case .checkable:
                candidate = outcomes[outcome]
                outcome += 1
            }
            if let need = graph.dependencies[index].first(where: { !isUpToDate[$0] }) {
                reasons[index] = reasons[need].decision != .runs ? .needMayRun(tasks[need].id) : .needWillRun(tasks[need].id)
                continue
            }
            // Every need up to date: every need was checkable and had a success, so this task was checked.
            switch candidate {
            case .failure(let error):
                // A task whose templates do not render fails when it starts, with that error.
                reasons[index] = .unresolvable(error.message)
            case .success(let answer):
                answers[index] = answer
                isUpToDate[index] = answer.isUpToDate
                reasons[index] = answer.cause
                if answer.isUpToDate { foundUpToDate(index, answer) }
            case nil:
                // Cannot be: its needs were all checked, so it was. Left to the check at its start.
                assertionFailure("task \(tasks[index].id) has its needs up to date but was not checked")
            }
        }
        merged.wait()
        batch.finish()
    }

    /// Fewest tasks a thread is given: handing checks to another thread costs some microseconds.
    static let tasksPerWay = 32

    /// One task's check, through the lane of the thread that makes it.
    private static func check(_ task: RunTask, resolver: WorkResolver, lane: any UpToDateBatchLane)
        -> Result<UpToDateAnswer, TemplateError> {
        Result { () throws(TemplateError) in
            let resolved = try resolver.checkedWork(for: task)
            return lane.check(resolved.work, inputs: resolved.inputs, outputs: resolved.outputs,
                               environmentNames: resolved.environmentNames)
        }
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
        // `platforms:` is the first condition, and the only one known before the run (docs/pipeline.md, "Platforms").
        if case .platform(let names)? = task.spec.conditions.first, !names.contains(where: { Platform.includes($0) }) {
            return .otherPlatform(PlatformCheck(names: names).summary)
        }
        if task.spec.service != nil { return .service }
        if node.isDynamicFanOut { return .fanOutAtRunTime }
        switch task.spec.when {
        case .failure: return .runsOnFailure
        case .always: return .runsAlways
        case .success: break
        }
        return task.spec.conditions.isEmpty ? nil : .conditionsDecide
    }
}
