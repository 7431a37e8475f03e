import ArgumentParser
import Execution
import Foundation
import Reporters
import StateStore
import TaskGraph

/// Opens `.jobgraph/` beside the pipeline and takes the pipeline's run lock; a lock held by another run
/// is an error (exit 2) unless `wait`, and one held by the run whose task started this one is shared
/// (docs/state.md, "The run lock").
func openState(in pipelineDirectory: String, pipelineFile: String, wait: Bool) throws -> (store: StateStore, lock: RunLock) {
    do {
        let store = try StateStore.open(directory: pipelineDirectory, pipelineFile: pipelineFile)
        if let recovery = store.recovery { Console.standardError.write(line: "warning: \(recovery)") }
        let environment = ProcessInfo.processInfo.environment
        let lock = wait ? try store.waitForRunLock(for: pipelineFile, environment: environment)
            : try store.acquireRunLock(for: pipelineFile, environment: environment)
        return (store, lock)
    } catch {
        Console.standardError.write(line: "error: \(error)")
        throw ExitCode(ExitStatus.invalid)
    }
}

/// Begins this run's record in the state store.
func startRecord(in store: StateStore, graph: TaskGraph, pipelineDirectory: String, isNested: Bool) throws -> RunRecorder {
    do {
        return try RunRecorder(store: store, pipelineFile: graph.pipeline.file, pipelineDirectory: pipelineDirectory,
                               taskCount: graph.nodes.count, startTime: Date(), isNested: isNested,
                               environment: ProcessInfo.processInfo.environment)
    } catch {
        Console.standardError.write(line: "error: cannot record the run in .jobgraph/state.db: \(error)")
        throw ExitCode(ExitStatus.invalid)
    }
}

/// Each node's expected seconds for critical-path scheduling: the median of its measured durations, and
/// for a task never measured the median of all (issue: "tasks never seen count as the median of all").
/// `nil` when nothing was measured yet, so every task counts as 1.
func expectedDurations(of graph: TaskGraph, from store: StateStore) -> [Double]? {
    guard let measured = try? store.medianDurations(pipelineFile: graph.pipeline.file), !measured.isEmpty else { return nil }
    let sorted = measured.values.sorted()
    let typical = sorted[sorted.count / 2]
    return graph.nodes.map { measured[$0.id] ?? measured[$0.baseID] ?? typical }
}

/// A run's configuration for the pipeline in `pipelineDirectory` (absolute), with the process's
/// environment: what the run, its dry run and `explain` all resolve tasks with.
func runConfiguration(pipelineDirectory: String, jobs: Int, processorCount: Int) -> RunConfiguration {
    RunConfiguration(jobs: jobs, pipelineDirectory: pipelineDirectory, stateDirectory: pipelineDirectory + "/.jobgraph",
                            environment: ProcessInfo.processInfo.environment, processorCount: processorCount)
}

/// What a run would decide for each task, read from `.jobgraph/state.db` without writing or locking it;
/// without one, as for a first run. A damaged one is what a run would move aside and start afresh without:
/// a warning, then the forecast of a first run. Any other unreadable store (one from a newer jobgraph, which
/// a run refuses too) is an error (exit 2).
func forecast(of graph: TaskGraph, configuration: RunConfiguration) throws -> RunForecast {
    let directory = configuration.pipelineDirectory
    do {
        let store: StateStore
        do {
            store = try StateStore.openReadOnly(directory: directory, pipelineFile: graph.pipeline.file)
                ?? StateStore.inMemory(directory: directory, pipelineFile: graph.pipeline.file)
        } catch let error as SQLiteError where error.isCorruption {
            Console.standardError.write(line: "warning: " + StateFileRecovery.unusable(StateStore.databasePath(inPipelineDirectory: directory), reason: error.message)
                + "; a run would move it aside and start a fresh one, so every task would run")
            store = try StateStore.inMemory(directory: directory, pipelineFile: graph.pipeline.file)
        }
        let batch = try StoreBatchCheck(store: store, pipelineDirectory: directory) { _ in }
        return RunForecast(graph: graph, configuration: configuration, batch: batch)
    } catch {
        Console.standardError.write(line: "error: cannot read .jobgraph/state.db: \(error)")
        throw ExitCode(ExitStatus.invalid)
    }
}
