import Execution
import PipelineModel

/// `TaskHistory.check` for a whole run's tasks before it starts, reading the store once (see
/// `UpToDateBatch`): the Runner's pre-pass, and the dry run's, over a store opened read-only.
public final class StoreBatchCheck: UpToDateBatchChecking {
    private let batch: UpToDateBatch
    private let store: StateStore
    private let pipelineDirectory: String
    private let note: (String) -> Void
    private let answersOnly: Bool

    /// - Parameters:
    ///   - pipelineDirectory: absolute; recorded paths are relative to it.
    ///   - answersOnly: only the answers' causes are read, nothing is recorded from them, and no output
    ///     cache key is made (a dry run of a pipeline without `cache: true`).
    ///   - note: takes a problem met in `finish`, for the user to see.
    /// - Throws: `SQLiteError` when the store cannot be read.
    public init(store: StateStore, pipelineDirectory: String, answersOnly: Bool = false,
                note: @escaping (String) -> Void) throws {
        batch = try store.makeUpToDateBatch()
        self.store = store
        self.pipelineDirectory = pipelineDirectory
        self.answersOnly = answersOnly
        self.note = note
    }

    public func makeLanes(_ count: Int) -> [any UpToDateBatchLane] {
        (0..<max(1, count)).map { _ in Lane(check: self) }
    }

    public func hasSuccess(of task: TaskID) -> Bool { batch.hasSuccess(of: task) }

    public func merge(_ lanes: [any UpToDateBatchLane]) {
        batch.merge(lanes.compactMap { ($0 as? Lane)?.lane })
    }

    /// One thread's checks (`UpToDateBatch.Lane`).
    final class Lane: UpToDateBatchLane {
        private let check: StoreBatchCheck
        let lane = UpToDateBatch.Lane()

        init(check: StoreBatchCheck) {
            self.check = check
        }

        func check(_ work: TaskWork, inputs: [String], outputs: [String], environmentNames: [String]) -> UpToDateAnswer {
            let definition = TaskDefinition(work: work, environmentNames: environmentNames, inputs: inputs, outputs: outputs,
                                            pipelineDirectory: check.pipelineDirectory)
            if let untracked = RunRecorder.untrackedAnswer(definition) { return untracked }
            // A task with no success on record runs whatever its files hold: when nothing keeps its
            // fingerprints, they are not made (hashing the inputs of 20,000 tasks was a fifth of the
            // 20,000-sample dry run of Benchmarks/snakemake.sh, by perf).
            if check.answersOnly, let cause = check.batch.causeWithoutFiles(of: work.id) {
                return UpToDateAnswer(check.store.explained(cause, of: work.id, definition: definition))
            }
            return RunRecorder.answer(check.batch.check(work.id, definition: definition, in: lane))
        }
    }

    /// Keeps the records of the files read afresh, unless the store is read-only.
    public func finish() {
        guard !store.isReadOnly else { return }
        do { try batch.finish() } catch { note("cannot record the files read before the run: \(error)") }
    }
}
