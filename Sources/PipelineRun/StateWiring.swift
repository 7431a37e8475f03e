import Execution
import Foundation
import OutputCache
import StateStore
import TaskGraph

/// Opens `.jobgraph/` beside the pipeline and takes the pipeline's run lock; a lock held by another run
/// is an error (exit 2) unless `wait`, and one held by the run whose task started this one is shared
/// (docs/state.md, "The run lock").
func openState(in pipelineDirectory: String, pipelineFile: String, wait: Bool,
               warn: (String) -> Void) throws(PipelineRunError) -> (store: StateStore, lock: RunLock) {
    do {
        let store = try StateStore.open(directory: pipelineDirectory, pipelineFile: pipelineFile)
        if let recovery = store.recovery { warn("\(recovery)") }
        let environment = ProcessInfo.processInfo.environment
        let lock = wait ? try store.waitForRunLock(for: pipelineFile, environment: environment)
            : try store.acquireRunLock(for: pipelineFile, environment: environment)
        return (store, lock)
    } catch {
        throw .state(error)
    }
}

/// A run's configuration for the pipeline in `pipelineDirectory` (absolute), with the process's
/// environment: what the run, its dry run and `explain` all resolve tasks with.
/// - Parameter jobs: `--jobs`; `nil` for as many as `processorCount`.
public func runConfiguration(pipelineDirectory: String, jobs: Int? = nil, keepGoing: Bool = false, force: Bool = false,
                             environment: [String: String], processorCount: Int) -> RunConfiguration {
    var configuration = RunConfiguration(jobs: jobs ?? processorCount, keepGoing: keepGoing, pipelineDirectory: pipelineDirectory,
                                         stateDirectory: pipelineDirectory + "/.jobgraph", environment: environment, processorCount: processorCount)
    configuration.force = force
    return configuration
}

/// What a run would decide for each task, read from `.jobgraph/state.db` without writing or locking it;
/// without one, as for a first run. A damaged one is what a run would move aside and start afresh without:
/// a warning, then the forecast of a first run. Any other unreadable store (one from a newer jobgraph, which
/// a run refuses too) is an error (exit 2).
/// - Parameter warn: told of a damaged store.
/// - Parameter outputCache: where a `cache: true` task would be restored from; `nil` for no cache.
public func forecast(of graph: TaskGraph, configuration: RunConfiguration, outputCache: OutputCacheSettings? = nil,
                     warn: @escaping @Sendable (String) -> Void) throws(PipelineRunError) -> RunForecast {
    let directory = configuration.pipelineDirectory
    do {
        let store: StateStore
        do {
            store = try StateStore.openReadOnly(directory: directory, pipelineFile: graph.pipeline.file)
                ?? StateStore.inMemory(directory: directory, pipelineFile: graph.pipeline.file)
        } catch let error as SQLiteError where error.isCorruption {
            warn(StateFileRecovery.unusable(StateStore.databasePath(inPipelineDirectory: directory), reason: error.message)
                + "; a run would move it aside and start a fresh one, so every task would run")
            store = try StateStore.inMemory(directory: directory, pipelineFile: graph.pipeline.file)
        }
        let cache = outputCache.flatMap { settings in
            graph.nodes.contains(where: \.spec.isCached) ? OutputCache(settings: settings, environment: configuration.environment, run: nil, warn: warn) : nil
        }
        // Without a cache, the forecast reads only the answers' causes: their fingerprints make no key.
        let batch = try StoreBatchCheck(store: store, pipelineDirectory: directory, answersOnly: cache == nil) { _ in }
        return RunForecast(graph: graph, configuration: configuration, batch: batch, outputCache: cache)
    } catch {
        throw .forecast(error)
    }
}
