import JobGraphBasics

/// A checked pipeline file: what it says, as plain values, with the locations of what it names.
public struct Pipeline: Sendable {
    /// The path as the user typed it.
    public var file: String
    public var version: Int
    public var name: String?
    /// `vars`, in file order. A task's environment holds those it uses and those in `export`
    /// (docs/pipeline.md, "Which variables a task gets").
    public var variables: [Variable]
    /// `export`: the variables every task's environment holds, used or not, in the order given.
    public var exportedVariables: [String] = []
    /// `env`, in file order.
    public var environment: [EnvironmentEntry]
    public var queues: [QueueSpec]
    /// The tasks in file order (a `foreach` task is one entry here; the graph expands it).
    public var tasks: [TaskSpec] {
        didSet { taskIndex = nil }
    }
    /// The loader's table of `tasks`, so the graph builder need not hash every id again; `nil` for a
    /// pipeline not made by the loader, or once `tasks` changes (so it can never be stale).
    package private(set) var taskIndex: TaskIndex?
    public var onSuccess: Template?
    public var onFailure: Template?
    /// `output:`, how the console shows what tasks print; `nil` when the file does not say.
    public var output: OutputMode?
    /// `executor:`; `nil` when the file does not say (local unless `--executor` says otherwise).
    public var executor: ExecutorKind?
    /// The top-level `slurm:` mapping.
    public var slurm: SlurmSpec?
    /// The top-level `resources:`, the totals tasks share (before `--resources`).
    public var resources: Resources?
    /// `default:`, the tasks a `run` that names none runs, in the order given; `nil` when the file does
    /// not say (such a run then runs every task that is not `manual`).
    public var defaultTasks: [Located<TaskID>]?
    /// `cache_dir:`, the output cache's folder, relative to the pipeline's folder or absolute; `nil` when the
    /// file does not say (docs/cache.md).
    public var cacheDirectory: String?
    /// `remote_cache:`; `nil` when the file does not say.
    public var remoteCache: RemoteCacheSpec?
    /// `include:`, in file order; their tasks are already among `tasks`, under `NAME:` (see `PipelineLoader`).
    public var includes: [Include] = []
    /// For each include (nested ones as `web:sub`), the full ids of what naming it on the command line
    /// runs: its file's `default:`, else its tasks that are neither `manual` nor `internal`.
    public var includedGoals: [String: [TaskID]] = [:]
    /// The names with a `:` in this file's own `needs` and `default:`, with the key that gives each: they
    /// can name only included tasks, so they are checked once the includes are loaded.
    var namespacedReferences: [NamespacedReference] = []

    public init(
        file: String, version: Int = 1, name: String? = nil, variables: [Variable] = [],
        environment: [EnvironmentEntry] = [], queues: [QueueSpec] = [], tasks: [TaskSpec] = [],
        onSuccess: Template? = nil, onFailure: Template? = nil
    ) {
        self.file = file
        self.version = version
        self.name = name
        self.variables = variables
        self.environment = environment
        self.queues = queues
        self.tasks = tasks
        self.onSuccess = onSuccess
        self.onFailure = onFailure
    }

    public func queue(named name: QueueName) -> QueueSpec? { queues.first { $0.name == name } }
}

/// One entry of `include:`: another pipeline file whose tasks join this one's as `NAME:ID`.
public struct Include: Sendable {
    /// The name, which prefixes the included tasks' ids.
    public var name: String
    /// Where the name is written.
    public var location: SourceLocation
    /// The file, relative to the including file's folder.
    public var file: Located<String>
    /// `dir:`, the included tasks' folder, relative to the including file's folder; `nil`: the included file's.
    public var directory: String?
    /// `vars:` given to the included file, over its own; the values may use the including file's variables.
    public var variables: [(name: String, value: Template, location: SourceLocation)]
}

/// A name with a `:` in a file's own `needs` or `default:` (its `key`), checked once the includes are loaded.
struct NamespacedReference: Sendable {
    var name: Located<TaskID>
    var key: String
}

/// What a file read through an include is told about it while it is decoded.
struct Inclusion {
    /// The include's name.
    var name: String
    /// The included file as messages name it.
    var file: String
    /// Where each variable the include sets is written.
    var variableLocations: [String: SourceLocation]
    /// Where the include names the file.
    var location: SourceLocation
}

/// One entry of `vars`.
public struct Variable: Hashable, Sendable {
    public var name: String
    /// The value; for a `sh` variable, its command's output once run (empty when the load ran no command).
    public var value: String
    /// Where the variable is declared under `vars`; `nil` for one added with `--var`.
    public var location: SourceLocation?
    /// `{sh: COMMAND}`: the command as written, whose output is the value; `nil` for a plain value.
    public var command: String?
    public init(name: String, value: String, location: SourceLocation?, command: String? = nil) {
        self.name = name
        self.value = value
        self.location = location
        self.command = command
    }
}

/// What a `sh` variable's command did: its exit status (`nil` when it could not start) and its output.
public struct VariableCommandOutput: Sendable {
    public var status: Int32?
    public var standardOutput: String
    /// What it wrote to standard error, or why it could not start.
    public var standardError: String
    public init(status: Int32?, standardOutput: String, standardError: String) {
        self.status = status
        self.standardOutput = standardOutput
        self.standardError = standardError
    }
}

/// Runs the command of a `sh` variable (already rendered, its placeholders shell-quoted) with `/bin/sh`
/// in the pipeline's folder. A load without one runs no command and leaves such variables empty, as
/// `validate` does (docs/pipeline.md, "Variables from commands").
public typealias VariableCommandRunner = (_ command: String) -> VariableCommandOutput

/// One `NAME: value` of an `env` mapping; the value may use `{{ var }}`.
public struct EnvironmentEntry: Hashable, Sendable {
    public var name: String
    public var value: Template
    public init(name: String, value: Template) {
        self.name = name
        self.value = value
    }
}

/// A named operation queue under `queues:`.
public struct QueueSpec: Hashable, Sendable {
    public var name: QueueName
    /// `nil`: the number of CPUs.
    public var maxConcurrent: Int?
    public var qos: QualityOfService?
    public var location: SourceLocation
    /// The queue's `slurm:` mapping, between the top level's and a task's own.
    public var slurm: SlurmSpec?
    public init(name: QueueName, maxConcurrent: Int? = nil, qos: QualityOfService? = nil, location: SourceLocation) {
        self.name = name
        self.maxConcurrent = maxConcurrent
        self.qos = qos
        self.location = location
    }
}

/// Every task id of a loaded pipeline with its position in `tasks`, and each `needs` entry resolved
/// to the position of the task it names: one table of ids, shared by the loader and the graph.
package final class TaskIndex: Sendable {
    /// Task id to its position in `Pipeline.tasks`.
    package let positionByID: [String: Int]
    /// For each task in order, for each of its `needs` in order, the named task's position; -1 for a
    /// name that is no task id (an item such as `make[a]`).
    package let needTargets: [Int32]

    init(positionByID: [String: Int], needTargets: [Int32]) {
        self.positionByID = positionByID
        self.needTargets = needTargets
    }
}

extension Pipeline {
    /// Keeps the loader's table; done last, since changing `tasks` drops it.
    mutating func keep(_ index: TaskIndex) { taskIndex = index }
}
