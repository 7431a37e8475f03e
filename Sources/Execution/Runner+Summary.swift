import Dispatch
import Foundation
import JobGraphBasics
import PipelineModel
import TaskGraph

/// What a run amounts to, once it has ended.
extension Runner {
    // MARK: - Summary

    func makeSummary() -> RunSummary {
        let book = state.withLock { $0 }
        var counts: [TaskState: Int] = [:]
        for taskState in book.plan.states { counts[taskState, default: 0] += 1 }
        let resolver = try? self.resolver.get()  // only for log paths; a resolver error already failed every task
        var failures = book.failures.keys.sorted().compactMap { index -> RunSummary.FailedTask? in
            guard let failure = book.failures[index] else { return nil }
            let task = book.tasks[index]
            // A task that printed nothing has no log (it is created by the first line): name none then. One
            // that failed before its executor took it has only an earlier run's log: name none either.
            let logPath = failure.hasLog
                ? resolver.map { $0.logPath(for: task.id) }.flatMap { FileManager.default.fileExists(atPath: $0) ? $0 : nil } ?? ""
                : ""
            return RunSummary.FailedTask(id: task.id, exitCode: failure.exitCode, reason: failure.reason,
                                         allowed: task.spec.allowFailure, logPath: logPath,
                                         lastLines: LogTail.lastLines(of: logPath, count: 10))
        }
        failures += book.hookFailures
        return RunSummary(counts: counts, wallTime: elapsed(), criticalPath: criticalPathTaken(book), failures: failures, stop: book.stop)
    }

    /// `not ready within 10s`, for a service whose `ready` condition did not hold in time.
    static func notReadyReason(_ task: RunTask) -> String {
        let timeout = task.spec.service?.timeout ?? Self.defaultServiceTimeout
        let shown = timeout == timeout.rounded() ? "\(Int(timeout))s" : "\(timeout)s"
        return "not ready within \(shown)"
    }

    /// Seconds a service may take to become ready when its `timeout` is not given.
    static let defaultServiceTimeout: Double = 30

    /// Walks back from the task that ended last through, at each step, the need that ended last.
    /// A service is stopped after what it served, so the walk starts at no service; on the path a service
    /// counts up to the moment it was ready, when what needs it started (what it needs then continues
    /// the walk), and follows only needs that ended (or were ready) before the task started.
    func criticalPathTaken(_ book: RunBook) -> [TaskID] {
        func endTime(_ index: Int) -> Double { book.serviceReadyAt[index] ?? book.ended[index] ?? -1 }
        var current = book.ended.indices.filter { book.ended[$0] != nil && book.tasks[$0].spec.service == nil }
            .max { endTime($0) < endTime($1) }
        var path: [TaskID] = []
        while let index = current {
            path.append(book.tasks[index].id)
            let started = book.firstStarted[index] ?? .infinity
            current = graph.dependencies[book.tasks[index].needsOf].filter { endTime($0) >= 0 && endTime($0) <= started }
                .max { endTime($0) < endTime($1) }
        }
        return path.reversed()
    }
}
