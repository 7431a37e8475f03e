import PipelineModel

/// The up-to-date rows of a run held back from the history while they repeat, task for task, the rows of
/// an earlier run in which every task was up to date: when the run ends with every task up to date, it
/// shares that run's rows (`task_rows_of`) instead of writing its own, as a replayed run does.
///
/// Why: a rerun that checks every task and finds each up to date wrote a row per task and, once 50 runs
/// were kept, deleted a row per task of the oldest run: 384 M instructions of the history thread for
/// 10,000 tasks, more than the checks themselves (callgrind), and 688 MB of `state.db` for 100,000 tasks.
///
/// Used on the history thread only, then by `RunRecorder.finish` once that thread has ended.
struct SharedTaskRows {
    /// The run whose rows this run would share.
    let source: RunID
    /// The source's tasks this run has not yet found up to date.
    private var unmatched: Set<String>
    /// The rows held back, in the order they came.
    private(set) var held: [TaskRecord] = []

    /// - Parameter tasks: the source run's tasks, each of them up to date in it.
    init(source: RunID, tasks: Set<String>) {
        self.source = source
        unmatched = tasks
        held.reserveCapacity(tasks.count)
    }

    /// Whether every task of the source was found up to date again: the run may share its rows.
    var matchesSource: Bool { unmatched.isEmpty }

    /// Takes `write` when it is an up-to-date verdict on a task of the source not seen before; `false`
    /// for anything else, which ends the sharing (the caller then writes what was held, before `write`).
    mutating func hold(_ write: HistoryWrite) -> Bool {
        guard case .ended(let record, nil, _) = write, record.state == .upToDate, record.attempts == 0,
              unmatched.remove(record.task.rawValue) != nil else { return false }
        held.append(record)
        return true
    }

    /// The held rows as writes, for a run that cannot share after all.
    var heldWrites: [HistoryWrite] {
        held.map { .ended($0, fingerprints: nil) }
    }
}

/// What the history thread does with a run's up-to-date rows: holds them back while the run may still
/// share an earlier run's (`SharedTaskRows`), and writes them as soon as it cannot.
struct TaskRowSharing {
    private var isDecided = false
    /// The rows held back, while the run may still share them.
    private(set) var shared: SharedTaskRows?

    /// `rows` less those held back; once a row ends the sharing, everything held comes first, in order.
    /// - Parameter source: the rows the run may share, looked up on the first up-to-date verdict when that
    ///   is the run's first row: a run whose first task executes shares nothing.
    mutating func passOn(_ rows: [HistoryWrite], source: () -> SharedTaskRows?) -> [HistoryWrite] {
        var passed: [HistoryWrite] = []
        for row in rows {
            if case .dropOldRuns = row {
                passed.append(row)
                continue
            }
            if !isDecided {
                isDecided = true
                if case .ended(let record, nil, _) = row, record.state == .upToDate { shared = source() }
            }
            if shared?.hold(row) == true { continue }
            if let held = shared?.heldWrites {
                passed += held
                shared = nil
            }
            passed.append(row)
        }
        return passed
    }

    /// Hands over what is held, ending the sharing.
    mutating func take() -> SharedTaskRows? {
        defer { shared = nil }
        return shared
    }
}
