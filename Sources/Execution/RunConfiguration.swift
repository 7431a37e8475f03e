import PipelineModel

/// The plain options of one run, as the command line gives them (ninja's BuildConfig).
public struct RunConfiguration: Sendable {
    /// Most tasks executing at once overall (`--jobs`).
    public var jobs: Int
    /// After a failure, keep starting tasks that do not depend on it (`--keep-going`).
    public var keepGoing: Bool
    /// The folder holding the pipeline file; relative paths in the file start here. Absolute.
    public var pipelineDirectory: String
    /// `.jobgraph/` beside the pipeline: logs and state. Absolute.
    public var stateDirectory: String
    /// The caller's environment, the base of every shell task's environment.
    public var environment: [String: String]
    /// Seconds between SIGTERM and SIGKILL when tasks are stopped (contract: 5 s).
    public var terminationGrace: Double
    /// How many processors a queue without `max_concurrent` may use.
    public var processorCount: Int
    /// Ignore up-to-date checks: run every task (`--force`).
    public var force: Bool = false
    /// Seconds a `reachable:` condition keeps trying to connect before it counts as unmet (contract:
    /// "retried briefly").
    public var reachablePatience: Double
    /// Answer yes to every task's `prompt:` without asking (`--yes`).
    public var answersPrompts = false
    /// The totals tasks' `resources` share: the file's `resources`, then `--resources`, with `mem` the
    /// machine's memory unless given (`cpus` is `jobs`).
    public var resources = Resources()
    /// Where each of `resources` comes from, for the run's record (`RunStart.resources`); `cpus`'s is `--jobs`.
    public var resourceSources: [String: TotalSource] = [:]

    public init(jobs: Int, keepGoing: Bool = false, pipelineDirectory: String, stateDirectory: String,
                environment: [String: String], terminationGrace: Double = 5, processorCount: Int, reachablePatience: Double = 1) {
        self.jobs = jobs
        self.keepGoing = keepGoing
        self.pipelineDirectory = pipelineDirectory
        self.stateDirectory = stateDirectory
        self.environment = environment
        self.terminationGrace = terminationGrace
        self.processorCount = processorCount
        self.reachablePatience = reachablePatience
    }

    public var logDirectory: String { stateDirectory + "/logs" }
}

/// What a user (or a signal) asks of a run in progress.
public enum RunControl: Sendable {
    /// SIGINT: stop starting tasks, terminate running ones (a second one kills at once).
    case interrupt
    /// SIGTERM: as interrupt.
    case terminate
    /// SIGUSR1: hold new starts; running tasks go on.
    case suspend
    /// SIGUSR2: release held starts.
    case resume
    /// SIGTSTP: stop running tasks' processes (Ctrl-Z), before jobgraph stops itself.
    case pauseProcesses
    /// SIGCONT: continue them (`fg`).
    case continueProcesses
}
