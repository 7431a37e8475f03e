import JobGraphBasics

/// One task as the file declares it, with `defaults` applied.
public struct TaskSpec: Sendable {
    public var id: TaskID
    /// Where the task's id is written.
    public var location: SourceLocation
    public var description: String?
    public var action: Action
    /// Each named task must finish first; naming a `foreach` task means all of its items.
    public var needs: [Located<TaskID>]
    public var queue: Located<QueueName>?
    public var priority: Priority
    public var qos: QualityOfService?
    public var cwd: Template?
    public var environment: [EnvironmentEntry]
    /// Seconds.
    public var timeout: Double?
    public var retries: Int
    /// Seconds before the first retry; doubles for each further attempt.
    public var retryDelay: Double
    public var when: RunWhen
    public var conditions: [Condition]
    /// Mutual-exclusion categories.
    public var exclusive: [String]
    public var inputs: [Template]
    public var outputs: [Template]
    public var foreach: Foreach?
    public var onSuccess: Template?
    public var onFailure: Template?
    public var allowFailure: Bool
    public var service: ServiceSpec?
    /// The task's own `slurm:` mapping (see `Pipeline.slurm(for:)` for what applies).
    public var slurm: SlurmSpec?

    public init(
        id: TaskID, location: SourceLocation, description: String? = nil, action: Action,
        needs: [Located<TaskID>] = [], queue: Located<QueueName>? = nil, priority: Priority = .normal,
        qos: QualityOfService? = nil, cwd: Template? = nil, environment: [EnvironmentEntry] = [],
        timeout: Double? = nil, retries: Int = 0, retryDelay: Double = 1, when: RunWhen = .success,
        conditions: [Condition] = [], exclusive: [String] = [], inputs: [Template] = [], outputs: [Template] = [],
        foreach: Foreach? = nil, onSuccess: Template? = nil, onFailure: Template? = nil,
        allowFailure: Bool = false, service: ServiceSpec? = nil
    ) {
        self.id = id
        self.location = location
        self.description = description
        self.action = action
        self.needs = needs
        self.queue = queue
        self.priority = priority
        self.qos = qos
        self.cwd = cwd
        self.environment = environment
        self.timeout = timeout
        self.retries = retries
        self.retryDelay = retryDelay
        self.when = when
        self.conditions = conditions
        self.exclusive = exclusive
        self.inputs = inputs
        self.outputs = outputs
        self.foreach = foreach
        self.onSuccess = onSuccess
        self.onFailure = onFailure
        self.allowFailure = allowFailure
        self.service = service
    }
}

/// What a task does: exactly one of `run`, `parallel`, `download`, `filter`.
public enum Action: Sendable {
    /// Shell commands run in order; the first failure stops the list.
    case run([Template])
    /// Shell commands run concurrently; done when all are done.
    case parallel([Template])
    case download(DownloadSpec)
    case filter(FilterSpec)

    /// The contract's key for this action.
    public var keyword: String {
        switch self {
        case .run: "run"
        case .parallel: "parallel"
        case .download: "download"
        case .filter: "filter"
        }
    }
}

/// `download: {url, to, sha256, max_bytes}`.
public struct DownloadSpec: Sendable {
    public var url: Template
    public var destination: Template
    /// Lower-case hex.
    public var sha256: String?
    public var maxBytes: Int?
    public init(url: Template, destination: Template, sha256: String? = nil, maxBytes: Int? = nil) {
        self.url = url
        self.destination = destination
        self.sha256 = sha256
        self.maxBytes = maxBytes
    }
}

/// `filter: {input, output, effect, …}`.
public struct FilterSpec: Sendable {
    public enum Effect: String, CaseIterable, Sendable {
        case sepia, grayscale, invert, blur
        case tiltShift = "tilt-shift"
        case resize
    }

    public var input: Template
    public var output: Template
    public var effect: Effect
    /// 0…1, for sepia.
    public var intensity: Double?
    /// Pixels, for blur and tilt-shift.
    public var radius: Double?
    public var width: Int?
    public var height: Int?
    /// 1…100, for JPEG output.
    public var quality: Int?

    public init(
        input: Template, output: Template, effect: Effect, intensity: Double? = nil, radius: Double? = nil,
        width: Int? = nil, height: Int? = nil, quality: Int? = nil
    ) {
        self.input = input
        self.output = output
        self.effect = effect
        self.intensity = intensity
        self.radius = radius
        self.width = width
        self.height = height
        self.quality = quality
    }
}

/// A check made just before a task would become ready; unmet means the task is skipped.
public enum Condition: Sendable {
    case fileExists(Template)
    /// The variable is set and not empty.
    case environmentSet(String)
    /// The shell command exits 0.
    case command(Template)
    /// A TCP connection to `host:port` succeeds.
    case reachable(host: String, port: Int)

    public var keyword: String {
        switch self {
        case .fileExists: "file_exists"
        case .environmentSet: "env"
        case .command: "command"
        case .reachable: "reachable"
        }
    }
}

/// `foreach`: one task per item.
public enum Foreach: Sendable {
    /// Items written in the file; each item is a string and its task is `id[item]`.
    case items([Located<String>])
    /// Items read once the task's needs are done (a JSON array or lines of text); tasks `id[0]`, `id[1]` ….
    case file(Template)
}

/// `service:` — a background task its dependents need running, not finished.
public struct ServiceSpec: Sendable {
    public var ready: Condition?
    /// Seconds to become ready.
    public var timeout: Double?
    public init(ready: Condition? = nil, timeout: Double? = nil) {
        self.ready = ready
        self.timeout = timeout
    }
}
