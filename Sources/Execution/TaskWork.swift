import JobGraphSystem
import PipelineModel

/// One attempt of a task, resolved and ready for an executor: templates rendered, paths absolute.
///
/// Nothing here assumes the work runs as a local child process, so a remote executor can take it too.
public struct TaskWork: Sendable {
    public enum Work: Sendable {
        /// Shell commands: one after another (stopping at the first failure), or all at once.
        case shell(commands: [String], concurrently: Bool)
        case download(url: String, destination: String, sha256: String?, maxBytes: Int?)
        case filter(FilterWork)
    }

    /// The variable that tells a task's processes their attempt, 1 for the first: executors set it from
    /// `attempt`, as `environment` does not hold it (docs/pipeline.md, "Retries").
    public static let attemptVariable = "JOBGRAPH_ATTEMPT"
    /// The variable that tells a shell task's processes the `cpus` its `resources` were granted (1 by
    /// default), so `bwa -t "$JOBGRAPH_CPUS"` uses them; set from `cpus` as the attempt is.
    public static let cpusVariable = "JOBGRAPH_CPUS"

    public var id: TaskID
    /// 1 for the first attempt.
    public var attempt: Int
    /// The `cpus` the task holds (`resources: {cpus: …}`), for `cpusVariable`.
    public var cpus = 1
    public var work: Work
    /// Absolute.
    public var workingDirectory: String
    /// The complete environment of the task's processes.
    public var environment: [String: String]
    /// `environment` encoded for spawning, without `DescendantSweep.taskVariable`, when it is the one most
    /// tasks share: encoded once per run, not once per child. `nil`: encode `environment` for each child.
    public var sharedEnvironment: EnvironmentBlock?
    /// From the task's QoS (contract: background 19, utility 10, others 0).
    public var niceness: Int32
    /// Seconds; the executor's teardown starts when it passes.
    public var timeout: Double?
    /// Where the task's output goes, as whole lines.
    public var logPath: String
    /// A command run on the task's behalf (a condition, a hook): its output goes after what the log
    /// holds, under no attempt header.
    public var appendsToLog: Bool
    /// Most of a concurrent `shell` work's processes running at once: the `--jobs` slots the task holds
    /// (contract: "each process counted against `--jobs`"); `nil` runs them all at once.
    public var processLimit: Int?
    /// `interactive: true`: the commands get jobgraph's own standard input, output and error, and the
    /// terminal's foreground when jobgraph has it; nothing is captured.
    public var isInteractive = false
    /// The question to ask on the terminal before the commands start (`prompt:`); `nil` when there is
    /// none or `run --yes` answered it.
    public var prompt: String?

    public init(id: TaskID, attempt: Int, work: Work, workingDirectory: String, environment: [String: String],
                niceness: Int32, timeout: Double?, logPath: String, appendsToLog: Bool = false, processLimit: Int? = nil,
                sharedEnvironment: EnvironmentBlock? = nil) {
        self.id = id
        self.attempt = attempt
        self.work = work
        self.workingDirectory = workingDirectory
        self.environment = environment
        self.niceness = niceness
        self.timeout = timeout
        self.logPath = logPath
        self.appendsToLog = appendsToLog
        self.processLimit = processLimit
        self.sharedEnvironment = sharedEnvironment
    }
}

/// A `filter` step with its paths resolved.
public struct FilterWork: Sendable {
    public var input: String
    public var output: String
    public var effect: FilterSpec.Effect
    public var intensity: Double?
    public var radius: Double?
    public var width: Int?
    public var height: Int?
    public var quality: Int?

    public init(input: String, output: String, spec: FilterSpec) {
        self.input = input
        self.output = output
        effect = spec.effect
        intensity = spec.intensity
        radius = spec.radius
        width = spec.width
        height = spec.height
        quality = spec.quality
    }
}

/// How one attempt ended.
public enum TaskResult: Sendable, Equatable {
    case succeeded
    /// `exitCode` when a process exited with one; `reason` says what went wrong in a sentence; `cause`
    /// where the executor can tell it (`retry_on` names it), `nil` for a plain exit code or the unknown.
    case failed(exitCode: Int32?, reason: String, cause: FailureCause? = nil)

    public var isSuccess: Bool { self == .succeeded }
}
