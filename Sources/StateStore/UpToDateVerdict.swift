import Execution

/// Whether a task may be skipped as `up-to-date` (contract: task states), and if not, why.
public enum UpToDateVerdict: Sendable, Equatable, CustomStringConvertible {
    case upToDate
    case outOfDate(Reason)

    /// Why a task must run: the run's reasons (`RunReason`), of which the check gives those about the
    /// task's own work.
    public typealias Reason = RunReason

    /// `.upToDate`, or the reason it must run.
    public var cause: RunReason {
        switch self {
        case .upToDate: .upToDate
        case .outOfDate(let reason): reason
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
