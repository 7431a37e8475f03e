import Foundation

/// What a run's up-to-date checks read from the store (`UpToDateBatch.Snapshot`), and the status of the
/// files it holds records of, read on a thread of its own while the pipeline loads
/// (`StateStore.readUpToDateBatchAhead`).
///
/// Why: reading 100,000 tasks' fingerprints and file records took 0.2 s of a checked no-op rerun (perf),
/// on the run's thread after the pipeline's 0.7 s load, with the second core idle. The run lock is held,
/// and nothing the process does before its checks writes the tables read, so the snapshot read ahead is
/// the one the checks would have read.
///
/// `@unchecked Sendable`: `result` is only touched while holding `condition`.
final class UpToDateBatchReadAhead: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<UpToDateBatch.Snapshot, SQLiteError>?

    init(store: StateStore) {
        let thread = Thread { [self] in
            let read = Result { () throws(SQLiteError) in
                var snapshot = try UpToDateBatch.Snapshot(of: store)
                snapshot.examineRecordedFiles(in: store)
                return snapshot
            }
            condition.lock()
            result = read
            condition.broadcast()
            condition.unlock()
        }
        thread.name = "jobgraph read-ahead"
        thread.start()
    }

    /// Waits for the read to end.
    func snapshot() throws(SQLiteError) -> UpToDateBatch.Snapshot {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let result { return try result.get() }
            condition.wait()
        }
    }
}
