/// Whether a task may be skipped as `up-to-date` (contract: task states), and if not, why.
public enum UpToDateVerdict: Sendable, Equatable, CustomStringConvertible {
    case upToDate
    case outOfDate(Reason)

    /// Why a task must run.
    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        /// The task declares neither `inputs` nor `outputs`, so nothing tells that its work is done.
        case untracked
        case neverSucceeded
        /// It executed since its last success and did not succeed (failed, cancelled, or killed midway).
        case lastRunUnsuccessful
        case definitionChanged
        /// The paths are relative to the pipeline's folder when inside it.
        case inputChanged(String)
        case inputAdded(String)
        case inputRemoved(String)
        case inputUnreadable(String)
        /// The `outputs` pattern as written, which names no existing file.
        case outputMissing(String)

        public var description: String {
            switch self {
            case .untracked: "declares no inputs or outputs"
            case .neverSucceeded: "never succeeded"
            case .lastRunUnsuccessful: "did not succeed last time"
            case .definitionChanged: "definition changed"
            case .inputChanged(let path): "input '\(path)' changed"
            case .inputAdded(let path): "input '\(path)' is new"
            case .inputRemoved(let path): "input '\(path)' is gone"
            case .inputUnreadable(let path): "input '\(path)' cannot be read"
            case .outputMissing(let pattern): "output '\(pattern)' missing"
            }
        }
    }

    /// Whether the task may be skipped.
    public var isUpToDate: Bool { self == .upToDate }

    /// `up-to-date`, or `out-of-date: <reason>`.
    public var description: String {
        switch self {
        case .upToDate: "up-to-date"
        case .outOfDate(let reason): "out-of-date: \(reason)"
        }
    }
}

/// The outcome of `StateStore.checkUpToDate`: the verdict, and the fingerprints to record if the task
/// then runs and succeeds (taken before it runs, so an input edited during the run makes it rerun).
public struct UpToDateCheck: Sendable, Equatable {
    public var verdict: UpToDateVerdict
    /// Pass to `recordTask` when the task then succeeds; `fingerprints.definition` is the definition
    /// fingerprint for its `TaskRecord`.
    public var fingerprints: TaskFingerprints
    /// Whether the store holds a success of this task that a later check could trust: then, before it
    /// executes, that success must be withdrawn durably (`recordTaskStarted`), or a kill midway would leave
    /// its half-written outputs looking up to date.
    public var hasTrustedSuccess: Bool

    public init(verdict: UpToDateVerdict, fingerprints: TaskFingerprints, hasTrustedSuccess: Bool = false) {
        self.verdict = verdict
        self.fingerprints = fingerprints
        self.hasTrustedSuccess = hasTrustedSuccess
    }
}
