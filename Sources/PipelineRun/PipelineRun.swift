import Execution
import Foundation
import JobGraphBasics
import JobGraphSystem
import OutputCache
import PipelineModel
import Reporters
import StateStore
import TaskGraph

/// A run of a pipeline as one library call: what `jobgraph run` and each round of `run --watch` do
/// between loading the pipeline and printing the summary.
public enum PipelineRun {
    /// Runs `graph` once on `executor`, recorded in `history`, with every event told to `observers`.
    /// - Parameters:
    ///   - history: the pipeline's state: up-to-date checks, the run's record and its attempts, and the
    ///     measured durations that rank the tasks.
    ///   - observers: hear every event in this order, on a thread of their own; closed once the run ends.
    ///   - control: where the signals read by the caller's event loop reach this run while it goes on.
    ///   - isNested: the run goes on under the lock of the run whose task started it (`RunLock.isNested`).
    ///   - stopsLeftBehindProcesses: stop every process still descending from this one once the run has
    ///     ended, counted in the summary by task; only for a process that runs nothing else (the command).
    ///   - endsProcess: the process exits after this run: what the run built is left for the exit to reclaim.
    ///   - outputCache: where `cache: true` tasks are restored from and stored; `nil` for none (`--no-cache`).
    ///   - messages: lines for standard error as they come: the executor's about its set-up (Slurm: the
    ///     allocation granted), then warnings about the history.
    /// - Returns: how the run ended.
    /// - Throws: `PipelineRunError.record` when the history cannot begin the run's record; nothing ran.
    public static func run(_ graph: TaskGraph, configuration: RunConfiguration, executor: any TaskExecutor,
                           history: StateStore, observers: sending [any RunObserver], control: RunControlRelay? = nil, isNested: Bool = false,
                           stopsLeftBehindProcesses: Bool = false, endsProcess: Bool = false, outputCache: OutputCacheSettings? = nil,
                           messages: @escaping @Sendable ([String]) -> Void = { _ in }) async throws(PipelineRunError) -> RunSummary {
        let recorder = try Result {
            try RunRecorder(store: history, pipelineFile: graph.pipeline.file, pipelineDirectory: configuration.pipelineDirectory,
                            taskCount: graph.nodes.count, startTime: Date(), isNested: isNested,
                            environment: ProcessInfo.processInfo.environment)
        }.mapError(PipelineRunError.record).get()
        // A run nested in this one names it in the history.
        var configuration = configuration
        configuration.environment[RunRecorder.runVariable] = "\(recorder.run.rawValue)"
        let recordsAttempts = AttemptRecorder(store: history, run: recorder.run,
                                              fanOuts: Set(graph.nodes.filter(\.isDynamicFanOut).map(\.id)), taskCount: graph.nodes.count,
                                              lost: recorder.noteLost)
        // Only a pipeline with a cached task speaks to a cache.
        let cache = outputCache.flatMap { settings in
            graph.nodes.contains(where: \.spec.isCached)
                ? OutputCache(settings: settings, environment: configuration.environment, run: recorder.run.rawValue) { messages(["warning: \($0)"]) }
                : nil
        }
        let runner = Runner(graph: graph, configuration: configuration, executor: executor, history: recorder,
                            expectedDurations: { expectedDurations(of: graph, from: history) }, outputCache: cache, executorMessages: messages)
        control?.attach(runner)
        async let summary = runner.run()
        await ObserverHub.drain(runner.events, into: [recordsAttempts] + observers, beforeDelivering: { recorder.flush() })
        var result = await summary
        // After the run released its executor: the Slurm executor's worker steps are not processes left behind.
        if stopsLeftBehindProcesses { result.leftBehind = stopLeftBehindProcesses(grace: configuration.terminationGrace) }
        control?.detach()
        messages(recorder.finish(result, endTime: Date()).map { "warning: \($0)" })
        if endsProcess {
            runner.leaveBookkeepingToExit()
            ExitReclaimed.park(graph)
        }
        return result
    }

    /// Each node's expected seconds for critical-path scheduling: the median of its measured durations, and
    /// for a task never measured the median of all (issue: "tasks never seen count as the median of all").
    /// `nil` when nothing was measured yet, so every task counts as 1.
    static func expectedDurations(of graph: TaskGraph, from store: StateStore) -> [Double]? {
        guard let measured = try? store.medianDurations(pipelineFile: graph.pipeline.file), !measured.isEmpty else { return nil }
        let sorted = measured.values.sorted()
        let typical = sorted[sorted.count / 2]
        return graph.nodes.map { measured[$0.id] ?? measured[$0.baseID] ?? typical }
    }

    /// Stops every process still descending from this one, counted by the task that started it.
    static func stopLeftBehindProcesses(grace: Double) -> [RunSummary.LeftBehind] {
        let stopped = DescendantSweep(grace: .milliseconds(Int64(grace * 1000))).run()
        var groups: [RunSummary.LeftBehind] = []
        for task in stopped.map({ $0.task.map { TaskID($0) } }) {
            guard let index = groups.firstIndex(where: { $0.task == task }) else {
                groups.append(RunSummary.LeftBehind(task: task, processCount: 1))
                continue
            }
            groups[index].processCount += 1
        }
        return groups
    }
}
