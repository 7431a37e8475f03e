#if canImport(Glibc)
import Glibc
#endif
import JobGraphBasics
import PipelineModel

/// The files jobgraph writes on the side of the work (task logs, the console, `--events`, `--trace`) that
/// could not be written, a full disk above all (issue 15: "nothing is lost in silence").
///
/// Each file is reported once, when it first fails, through `announce`; whoever writes it stops there,
/// so the file has no gap (its last line may be cut short). A failure never changes a task's outcome,
/// but a file the user asked for by name that lost events fails the run (`losesRequestedEvents`).
/// Safe from any thread.
public final class WriteFailures: Sendable {
    /// What the file was for.
    public enum Target: Sendable, Equatable {
        /// The log of a task (`.jobgraph/logs/<task>.log`).
        case taskLog(TaskID)
        /// jobgraph's standard output or error.
        case console
        /// `--events FILE`.
        case eventFile
        /// `--trace FILE`.
        case trace
    }

    /// One file that could not be written, with the system's reason.
    public struct Failure: Sendable, Equatable, CustomStringConvertible {
        public var target: Target
        public var path: String
        /// `strerror` of the failed call: "No space left on device".
        public var reason: String

        /// The warning line's text (without `warning: `).
        public var description: String {
            switch target {
            case .taskLog(let task):
                "cannot write the log of task '\(task)' to '\(path)': \(reason); the rest of its output is not in the log"
            case .console:
                "cannot write to \(path): \(reason); the rest of the output there is lost"
            case .eventFile:
                "cannot write the event file '\(path)': \(reason); it lacks the events from here on"
            case .trace:
                "cannot write the trace '\(path)': \(reason)"
            }
        }
    }

    private let failures = Locked<[Failure]>([])
    private let announce: @Sendable (Failure) -> Void

    /// - Parameter announce: called once per file, at its first failure, outside any lock of this object.
    public init(announce: @escaping @Sendable (Failure) -> Void = { _ in }) {
        self.announce = announce
    }

    /// Records that writing `path` failed with `errno`; only the first failure of a path is kept and announced.
    public func record(_ target: Target, path: String, errno code: Int32) {
        let failure = Failure(target: target, path: path, reason: String(cString: strerror(code)))
        let isFirst = failures.withLock { failures -> Bool in
            guard !failures.contains(where: { $0.path == path }) else { return false }
            failures.append(failure)
            return true
        }
        if isFirst { announce(failure) }
    }

    /// Every file that failed, in the order they first did.
    public var all: [Failure] { failures.withLock { $0 } }

    /// The tasks whose logs lack part of their output.
    public var incompleteLogs: [Failure] {
        all.filter { if case .taskLog = $0.target { true } else { false } }
    }

    /// Whether `--events` or `--trace`, which the user asked for, could not be written whole: the run's
    /// exit status is then 1 even when every task succeeded, since whatever reads that file would be misled.
    public var losesRequestedEvents: Bool {
        all.contains { $0.target == .eventFile || $0.target == .trace }
    }
}
