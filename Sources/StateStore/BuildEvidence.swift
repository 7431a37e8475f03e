import JobGraphBasics

/// What a run's up-to-date checks examined, gathered from its history rows on the history writer's thread
/// (`CheckedPaths`): with it, a build that ended with every task done records the verdict "every task up to
/// date" for the rerun after it (`StateStore.recordReplay`).
///
/// Why that verdict holds: each task's success stored the hashes of its inputs as they were at these
/// statuses, and its definition, which the pipeline file and the command fix. A rerun that finds every
/// input at the status its hash was taken at, every output there, and the up-to-date tables as the build
/// left them, judges every task up to date; it would not need to check one.
struct BuildEvidence: Sendable {
    /// Tasks noted as done (succeeded or up to date) with their checked paths.
    private(set) var doneTasks = 0
    /// False once a task ended otherwise, without checked paths, or two checks saw one input differently.
    private(set) var isComplete = true
    /// Each input's status, by store key.
    private var inputs: [String: FileStatus] = [:]
    /// The outputs' store keys.
    private var outputs: [String] = []

    mutating func note(_ rows: [HistoryWrite]) {
        guard isComplete else { return }
        for row in rows {
            switch row {
            case .started, .dropOldRuns:
                continue
            case .endedUntracked:
                isComplete = false
            case .ended(let record, _, let checked):
                guard record.state == .succeeded || record.state == .upToDate, let checked else {
                    isComplete = false
                    return
                }
                doneTasks += 1
                for input in checked.inputs {
                    if let seen = inputs.updateValue(input.status, forKey: input.key), seen != input.status {
                        isComplete = false
                        return
                    }
                }
                outputs += checked.outputs
            }
        }
    }

    /// Every path the rerun's checks would examine, with the status that keeps its verdict: an input's as its
    /// hash was taken, an output that no task reads as it is now. `nil` when an output is missing (the
    /// rerun would run its task) or the evidence is not complete.
    /// - Parameter path: the absolute path of a store key (`StateStore.path(ofFileKey:)`).
    func examinedPaths(path: (String) -> String) -> [NoOpReplayRecord.ExaminedPath]? {
        guard isComplete else { return nil }
        var paths: [NoOpReplayRecord.ExaminedPath] = []
        paths.reserveCapacity(inputs.count + outputs.count)
        for (key, status) in inputs { paths.append(NoOpReplayRecord.ExaminedPath(path: path(key), status: status)) }
        for key in outputs where inputs[key] == nil {
            let absolute = path(key)
            guard let status = FileStatus(path: absolute) else { return nil }
            paths.append(NoOpReplayRecord.ExaminedPath(path: absolute, status: status))
        }
        return paths
    }
}
