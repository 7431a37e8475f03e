import PipelineModel

/// One row of a run's history to write, for `StateStore.record(_:run:)`.
public enum HistoryWrite: Sendable, Equatable {
    /// The task began executing: its history row says `executing`, and its last success is no longer trusted.
    case started(TaskID)
    /// The task reached a terminal state; `fingerprints` are stored when it succeeded.
    case ended(TaskRecord, fingerprints: TaskFingerprints?)
    /// An untracked task (no inputs, no outputs) reached a terminal state: written as `ended` without
    /// fingerprints, its record's `definition` the fingerprint of `definition`. The writer's thread hashes
    /// it, not the runner's, which starts the next task meanwhile (perf: the hash was 8% of the user time
    /// of a 10,000-task layered run).
    case endedUntracked(TaskRecord, definition: TaskDefinition)
    /// The pipeline's runs beyond the store's `retainedRuns` go, with their rows; the run's own record
    /// queues it first (see `RunRecorder`).
    case dropOldRuns(pipelineFile: String)

    /// The terminal state written, for either kind of end.
    var endedRecord: TaskRecord? {
        switch self {
        case .ended(let record, _), .endedUntracked(let record, _): record
        case .started, .dropOldRuns: nil
        }
    }
}
