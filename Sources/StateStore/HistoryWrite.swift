import PipelineModel

/// One row of a run's history to write, for `StateStore.record(_:run:)`.
public enum HistoryWrite: Sendable, Equatable {
    /// The task began executing: its history row says `executing`, and its last success is no longer trusted.
    case started(TaskID)
    /// The task reached a terminal state; `fingerprints` are stored when it succeeded.
    case ended(TaskRecord, fingerprints: TaskFingerprints?)
    /// The pipeline's runs beyond the store's `retainedRuns` go, with their rows; the run's own record
    /// queues it first (see `RunRecorder`).
    case dropOldRuns(pipelineFile: String)
}
