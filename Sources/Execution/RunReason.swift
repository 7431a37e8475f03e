import PipelineModel

/// Why a task runs, may run, or is up to date: the one answer the dry run, `explain`, the run's
/// `--explain` lines and its events all report (issue 13: "one piece of code decides whether a task runs").
///
/// The up-to-date check (the state store's) gives the answers about a task's own work; the pre-pass over
/// the graph (`UpToDatePrepass`) gives those about its place in it. Paths are relative to the pipeline's
/// folder when inside it.
public enum RunReason: Sendable, Hashable, CustomStringConvertible {
    /// Its outputs exist and nothing that defines it or that it reads changed since its last success.
    case upToDate
    /// `--force`: every check is ignored.
    case forced
    /// It declares neither `inputs` nor `outputs`, so nothing tells that its work is done.
    case untracked
    /// No run of it is on record.
    case neverRan
    /// It ran, but never succeeded (as far as the history goes back).
    case neverSucceeded
    /// It executed since its last success and did not succeed (failed, cancelled, or killed midway).
    case lastRunUnsuccessful
    /// Its action changed kind (`run` to `download`, …).
    case actionChanged
    /// A `run` or `parallel` command changed.
    case commandChanged
    /// A variable the pipeline sets for it changed, appeared or disappeared.
    case environmentChanged(String)
    /// A parameter of a `download` or `filter` step changed, appeared or disappeared: `url`, `to`, `effect` …
    case parameterChanged(String)
    case workingDirectoryChanged
    /// Its `inputs` patterns changed.
    case inputPatternsChanged
    /// Its `outputs` patterns changed.
    case outputPatternsChanged
    /// Its definition changed, and the history does not say how (recorded by an older jobgraph).
    case definitionChanged
    case inputChanged(String)
    case inputAdded(String)
    case inputRemoved(String)
    case inputUnreadable(String)
    /// The `outputs` pattern as written, which names no existing file.
    case outputMissing(String)
    /// The state store could not be read; the task runs rather than risk skipping work.
    case historyUnavailable
    /// Decided at its start: it needs this task, which will run first and may change what it reads.
    case needWillRun(TaskID)
    /// Decided at its start: it needs this task, which itself may run.
    case needMayRun(TaskID)
    /// Decided at its start: its conditions are checked once its needs are done.
    case conditionsDecide
    /// Decided at its start: it runs only when a need fails (`when: failure`).
    case runsOnFailure
    /// Decided at its start: it runs once its needs are done, whatever they did (`when: always`).
    case runsAlways
    /// A service always runs while something needs it.
    case service
    /// A dynamic fan-out reads its items when its needs are done.
    case fanOutAtRunTime
    /// Its templates cannot be rendered; it fails when it starts, with this error.
    case unresolvable(String)
    /// Its `platforms:` leave out the one jobgraph runs on: it is skipped, as by an unmet condition.
    /// The value reads `platform is darwin (this is linux/amd64)`.
    case otherPlatform(String)
    /// Not up to date, but the output cache holds its key: it is restored, not run (docs/cache.md). The
    /// origin reads `local cache, stored by run 3 on build-2 at …`.
    case restorable(key: String, origin: String)

    /// How certain the answer is before the run.
    public enum Decision: String, Sendable, Codable {
        /// It ends without running.
        case upToDate = "up-to-date"
        /// It will execute.
        case runs
        /// Its check happens at its start, once what it needs has run.
        case mayRun = "may-run"
        /// It is skipped without a check (`platforms:`).
        case skipped
        /// Its outputs are restored from the output cache.
        case restored
    }

    public var decision: Decision {
        switch self {
        case .upToDate: .upToDate
        case .needWillRun, .needMayRun, .conditionsDecide, .runsOnFailure, .runsAlways, .fanOutAtRunTime: .mayRun
        case .otherPlatform: .skipped
        case .restorable: .restored
        default: .runs
        }
    }

    /// Whether the task may be skipped.
    public var isUpToDate: Bool { self == .upToDate }

    public var description: String {
        switch self {
        case .upToDate: "up-to-date"
        case .forced: "--force"
        case .untracked: "no inputs or outputs declared (always runs)"
        case .neverRan: "never ran"
        case .neverSucceeded: "no recorded success"
        case .lastRunUnsuccessful: "did not succeed last time"
        case .actionChanged: "action changed"
        case .commandChanged: "command changed"
        case .environmentChanged(let name): "environment '\(name)' changed"
        case .parameterChanged(let name): "action parameter '\(name)' changed"
        case .workingDirectoryChanged: "working directory changed"
        case .inputPatternsChanged: "inputs patterns changed"
        case .outputPatternsChanged: "outputs patterns changed"
        case .definitionChanged: "definition changed"
        case .inputChanged(let path): "input '\(path)' changed"
        case .inputAdded(let path): "input '\(path)' added"
        case .inputRemoved(let path): "input '\(path)' removed"
        case .inputUnreadable(let path): "input '\(path)' cannot be read"
        case .outputMissing(let pattern): "output '\(pattern)' missing"
        case .historyUnavailable: "the state store could not tell"
        case .needWillRun(let need): "may run: it needs '\(need)', which will run"
        case .needMayRun(let need): "may run: it needs '\(need)', which may run"
        case .conditionsDecide: "may run: its conditions are checked when its needs are done"
        case .runsOnFailure: "may run: only if a need fails"
        case .runsAlways: "may run: once its needs are done, whatever they did"
        case .service: "it is a service (always runs)"
        case .fanOutAtRunTime: "may run: its items are read at run time"
        case .unresolvable(let message): "fails at its start: \(message)"
        case .otherPlatform(let summary): "skipped: \(summary)"
        case .restorable(let key, let origin): "restored: cache hit \(key.prefix(8))… (\(origin))"
        }
    }
}
