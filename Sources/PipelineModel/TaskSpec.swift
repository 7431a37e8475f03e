import JobGraphBasics

/// One task as the file declares it, with `defaults` applied.
///
/// A large file holds a million of these at once, so the row keeps inline only what nearly every task
/// sets (id, action, needs, files); the fields most tasks leave alone live in one shared box that is
/// allocated only for a task that sets one of them. Every field reads and writes as a plain property.
public struct TaskSpec: Sendable {
    public var id: TaskID
    /// Where the task's id is written.
    public var location: SourceLocation
    public var action: Action
    /// Each named task must finish first; naming a `foreach` task means all of its items.
    public var needs: [Located<TaskID>]
    public var inputs: [Template]
    public var outputs: [Template]
    public var priority: Priority
    public var when: RunWhen
    public var allowFailure: Bool
    /// The rarely set fields; `nil` while all of them have their defaults.
    private var rare: RareFieldsBox?

    public var description: String? {
        get { rare?.fields.description ?? nil }
        set { updateRare { $0.description = newValue } }
    }
    public var queue: Located<QueueName>? {
        get { rare?.fields.queue ?? nil }
        set { updateRare { $0.queue = newValue } }
    }
    public var qos: QualityOfService? {
        get { rare?.fields.qos ?? nil }
        set { updateRare { $0.qos = newValue } }
    }
    public var cwd: Template? {
        get { rare?.fields.cwd ?? nil }
        set { updateRare { $0.cwd = newValue } }
    }
    public var environment: [EnvironmentEntry] {
        get { rare?.fields.environment ?? [] }
        set { updateRare { $0.environment = newValue } }
    }
    /// Seconds.
    public var timeout: Double? {
        get { rare?.fields.timeout ?? nil }
        set { updateRare { $0.timeout = newValue } }
    }
    public var retries: Int {
        get { rare?.fields.retries ?? 0 }
        set { updateRare { $0.retries = newValue } }
    }
    /// Seconds before the first retry; doubles for each further attempt.
    public var retryDelay: Double {
        get { rare?.fields.retryDelay ?? 1 }
        set { updateRare { $0.retryDelay = newValue } }
    }
    /// The entries of `needs` that name the fan-out item (`map[{{ index }}]`), by position in `needs`:
    /// each item of the task needs what its own rendering names (docs/pipeline.md, "Per-item chains").
    public var itemNeeds: [Int: Template] {
        get { rare?.fields.itemNeeds ?? [:] }
        set {
            // Set for every task with `needs`: an empty value must not give it a box (heaptrack: 69 of the
            // 125 MB peak of validating the 100,000-task graph of Benchmarks/table.sh).
            if newValue.isEmpty && rare == nil { return }
            updateRare { $0.itemNeeds = newValue }
        }
    }
    /// `retry_on:` the failures that are retried; `nil` retries every failure.
    public var retryOn: [RetryCondition]? {
        get { rare?.fields.retryOn ?? nil }
        set { updateRare { $0.retryOn = newValue } }
    }
    /// `retry_scale:` what each retry multiplies; `nil` changes nothing.
    public var retryScale: RetryScale? {
        get { rare?.fields.retryScale ?? nil }
        set { updateRare { $0.retryScale = newValue } }
    }
    public var conditions: [Condition] {
        get { rare?.fields.conditions ?? [] }
        set { updateRare { $0.conditions = newValue } }
    }
    /// Mutual-exclusion categories.
    public var exclusive: [String] {
        get { rare?.fields.exclusive ?? [] }
        set { updateRare { $0.exclusive = newValue } }
    }
    public var foreach: Foreach? {
        get { rare?.fields.foreach ?? nil }
        set { updateRare { $0.foreach = newValue } }
    }
    public var onSuccess: Template? {
        get { rare?.fields.onSuccess ?? nil }
        set { updateRare { $0.onSuccess = newValue } }
    }
    public var onFailure: Template? {
        get { rare?.fields.onFailure ?? nil }
        set { updateRare { $0.onFailure = newValue } }
    }
    public var service: ServiceSpec? {
        get { rare?.fields.service ?? nil }
        set { updateRare { $0.service = newValue } }
    }
    /// `manual: true`: the task runs only when named on the command line (or in `default:`), or when a task
    /// that runs needs it; a `run` that names nothing leaves it out.
    public var isManual: Bool {
        get { rare?.fields.isManual ?? false }
        set { updateRare { $0.isManual = newValue } }
    }
    /// `params:`, in file order: values given after the task's name on the command line, each a
    /// variable of this task alone (docs/pipeline.md, "Task parameters").
    public var parameters: [TaskParameter] {
        get { rare?.fields.parameters ?? [] }
        set { updateRare { $0.parameters = newValue } }
    }
    /// `aliases:`, more names the command line may give the task; checked against every id and alias.
    public var aliases: [Located<TaskID>] {
        get { rare?.fields.aliases ?? [] }
        set { updateRare { $0.aliases = newValue } }
    }
    /// `internal: true`: the task runs only when a task that runs needs it; `list` leaves it out and the
    /// command line cannot name it.
    public var isInternal: Bool {
        get { rare?.fields.isInternal ?? false }
        set { updateRare { $0.isInternal = newValue } }
    }
    /// `interactive: true`: the task's commands get jobgraph's own standard input, output and error, and
    /// the task runs alone (docs/pipeline.md, "Interactive tasks").
    public var isInteractive: Bool {
        get { rare?.fields.isInteractive ?? false }
        set { updateRare { $0.isInteractive = newValue } }
    }
    /// `prompt:` — the question asked on the terminal before the task starts; any answer but `y` or `yes`
    /// fails the task.
    public var prompt: String? {
        get { rare?.fields.prompt ?? nil }
        set { updateRare { $0.prompt = newValue } }
    }
    /// `cache: true`, here or in `defaults`: a task with `outputs` whose outputs and log are restored from
    /// the output cache when its key matches (docs/cache.md). Never set for a task that cannot be cached.
    public var isCached: Bool {
        get { rare?.fields.isCached ?? false }
        set { updateRare { $0.isCached = newValue } }
    }
    /// `cache_env:`, the names of outside environment variables whose values are part of the cache key.
    public var cacheEnvironment: [String] {
        get { rare?.fields.cacheEnvironment ?? [] }
        set { updateRare { $0.cacheEnvironment = newValue } }
    }
    /// Whether the task needs the terminal to itself, and so runs while nothing else executes.
    public var runsAlone: Bool { isInteractive || prompt != nil }
    /// `resources:`, what the task holds while it executes; `nil` holds one `--jobs` slot and nothing else.
    public var resources: Resources? {
        get { rare?.fields.resources ?? nil }
        set { updateRare { $0.resources = newValue } }
    }
    /// The task's own `slurm:` mapping (see `Pipeline.slurm(for:)` for what applies).
    public var slurm: SlurmSpec? {
        get { rare?.fields.slurm ?? nil }
        set { updateRare { $0.slurm = newValue } }
    }

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
        self.action = action
        self.needs = needs
        self.inputs = inputs
        self.outputs = outputs
        self.priority = priority
        self.when = when
        self.allowFailure = allowFailure
        self.rare = RareFieldsBox(RareFields(
            description: description, queue: queue, qos: qos, cwd: cwd, environment: environment, timeout: timeout,
            retries: retries, retryDelay: retryDelay, conditions: conditions, exclusive: exclusive, foreach: foreach,
            onSuccess: onSuccess, onFailure: onFailure, service: service))
    }

    /// A task with every other field at its default and no box for rare fields yet: how the decoder
    /// starts each task, setting fields as it reads them.
    init(id: TaskID, location: SourceLocation, action: Action) {
        self.id = id
        self.location = location
        self.action = action
        self.needs = []
        self.inputs = []
        self.outputs = []
        self.priority = .normal
        self.when = .success
        self.allowFailure = false
        self.rare = nil
    }

    /// Changes rare fields in a box of this task's own (a fresh one: boxes are immutable, so copies of
    /// the task never see the change).
    private mutating func updateRare(_ change: (inout RareFields) -> Void) {
        var fields = rare?.fields ?? RareFields()
        change(&fields)
        rare = RareFieldsBox(fields)
    }
}

/// The task fields most tasks leave at their defaults. A new task key that few tasks set goes here,
/// with its default, plus an accessor and an `init` parameter on `TaskSpec`.
private struct RareFields: Sendable {
    var description: String?
    var queue: Located<QueueName>?
    var qos: QualityOfService?
    var cwd: Template?
    var environment: [EnvironmentEntry] = []
    var timeout: Double?
    var retries = 0
    var retryDelay: Double = 1
    var retryOn: [RetryCondition]?
    var itemNeeds: [Int: Template] = [:]
    var retryScale: RetryScale?
    var conditions: [Condition] = []
    var exclusive: [String] = []
    var foreach: Foreach?
    var onSuccess: Template?
    var onFailure: Template?
    var service: ServiceSpec?
    var slurm: SlurmSpec?
    var resources: Resources?
    var isManual = false
    var parameters: [TaskParameter] = []
    var aliases: [Located<TaskID>] = []
    var isInternal = false
    var isInteractive = false
    var prompt: String?
    var isCached = false
    var cacheEnvironment: [String] = []
}

/// An immutable box, shared by copies of a task; changing a field makes a new one.
private final class RareFieldsBox: Sendable {
    let fields: RareFields
    init(_ fields: RareFields) { self.fields = fields }
}

/// What a task does: exactly one of `run`, `parallel`, `download`, `filter`.
public enum Action: Sendable {
    /// Shell commands run in order; the first failure stops the list.
    case run([Template])
    /// Shell commands run concurrently; done when all are done.
    case parallel([Template])
    // Boxed, so the common `run` keeps every task's row small.
    indirect case download(DownloadSpec)
    indirect case filter(FilterSpec)

    /// Whether the step is shell commands (`run`, `parallel`), as opposed to a built-in step that runs in
    /// jobgraph's process and names the file it writes.
    public var isShell: Bool {
        switch self {
        case .run, .parallel: true
        case .download, .filter: false
        }
    }

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
    /// jobgraph runs on one of these platforms (`linux`, `arm64`, `linux/arm64`; see `Platform`): the
    /// task's `platforms:`, checked before its `conditions`.
    case platform([String])

    public var keyword: String {
        switch self {
        case .fileExists: "file_exists"
        case .environmentSet: "env"
        case .command: "command"
        case .reachable: "reachable"
        case .platform: "platforms"
        }
    }
}

/// `foreach`: one task per item.
public enum Foreach: Sendable {
    /// Items written in the file; each item is a string and its task is `id[item]`.
    case items([Located<String>])
    /// Items read once the task's needs that do not depend on the item are done (a JSON array or lines of
    /// text); tasks `id[0]`, `id[1]` ….
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
