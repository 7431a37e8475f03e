import JobGraphBasics

/// Where a task's processes run: `executor:` in the file, `--executor` on the command line.
public enum ExecutorKind: String, CaseIterable, Sendable {
    case local
    case slurm
}

/// How the Slurm executor uses the cluster (`slurm: {mode: …}`, `--slurm-mode`).
public enum SlurmMode: String, CaseIterable, Sendable {
    /// One allocation for the run; each task a job step inside it.
    case allocation
    /// One batch job per task.
    case jobs
}

/// A `slurm:` mapping at the top level, in a queue or in a task; a key set at a lower level overrides the
/// same key above it (task over queue over top level).
///
/// `mode`, `nodes`, `queue_size`, `submit_rate` and `poll_interval` describe the whole run and are only
/// accepted at the top level.
public struct SlurmSpec: Hashable, Sendable {
    public var partition: String?
    public var account: String?
    /// Seconds; Slurm's `--time`, a backstop behind jobgraph's own `timeout`.
    public var time: Double?
    /// CPUs per task (`--cpus-per-task`).
    public var cpus: Int?
    /// Slurm's `--mem` as written (`500M`, `4G`; a bare number is megabytes).
    public var mem: String?
    /// GPUs per task (`--gres=gpu:N`), only from the task's `resources`.
    public var gpus: Int?
    /// Nodes of the allocation (allocation mode) or of each job (jobs mode).
    public var nodes: Int?
    public var mode: SlurmMode?
    /// Most jobs submitted and not yet finished at once (jobs mode).
    public var queueSize: Int?
    /// Most submissions per second (jobs mode).
    public var submitRate: Double?
    /// Longest seconds between two status polls (jobs mode).
    public var pollInterval: Double?
    /// Extra arguments for `sbatch` (and `salloc`), one per entry.
    public var sbatchArgs: [String]?
    /// Extra arguments for `srun`, one per entry.
    public var srunArgs: [String]?
    /// Where the mapping is written.
    public var location: SourceLocation?

    public init(
        partition: String? = nil, account: String? = nil, time: Double? = nil, cpus: Int? = nil, mem: String? = nil,
        nodes: Int? = nil, mode: SlurmMode? = nil, queueSize: Int? = nil, submitRate: Double? = nil,
        pollInterval: Double? = nil, sbatchArgs: [String]? = nil, srunArgs: [String]? = nil, location: SourceLocation? = nil
    ) {
        self.partition = partition
        self.account = account
        self.time = time
        self.cpus = cpus
        self.mem = mem
        self.nodes = nodes
        self.mode = mode
        self.queueSize = queueSize
        self.submitRate = submitRate
        self.pollInterval = pollInterval
        self.sbatchArgs = sbatchArgs
        self.srunArgs = srunArgs
        self.location = location
    }

    /// This mapping with every key that `lower` sets taken from `lower`.
    public func overridden(by lower: SlurmSpec?) -> SlurmSpec {
        guard let lower else { return self }
        var merged = self
        merged.partition = lower.partition ?? partition
        merged.account = lower.account ?? account
        merged.time = lower.time ?? time
        merged.cpus = lower.cpus ?? cpus
        merged.mem = lower.mem ?? mem
        merged.gpus = lower.gpus ?? gpus
        merged.nodes = lower.nodes ?? nodes
        merged.mode = lower.mode ?? mode
        merged.queueSize = lower.queueSize ?? queueSize
        merged.submitRate = lower.submitRate ?? submitRate
        merged.pollInterval = lower.pollInterval ?? pollInterval
        merged.sbatchArgs = lower.sbatchArgs ?? sbatchArgs
        merged.srunArgs = lower.srunArgs ?? srunArgs
        merged.location = lower.location ?? location
        return merged
    }

    /// `--mem` in megabytes, as Slurm reads it (a bare number is megabytes).
    public var memoryMegabytes: Int? {
        guard let mem, let last = mem.last else { return nil }
        let scale: Int
        var digits = Substring(mem)
        switch last.uppercased() {
        case "K": scale = 0
        case "M": scale = 1
        case "G": scale = 1024
        case "T": scale = 1024 * 1024
        default: scale = 1
        }
        if !last.isNumber { digits = digits.dropLast() }
        guard let value = Int(digits) else { return nil }
        return scale == 0 ? (value + 1023) / 1024 : value * scale
    }
}

extension Pipeline {
    /// The Slurm options of one task: the top level's, then its queue's, then its own.
    public func slurm(for task: TaskSpec) -> SlurmSpec {
        var spec = slurm ?? SlurmSpec()
        if let queue = task.queue.flatMap({ self.queue(named: $0.value) }) { spec = spec.overridden(by: queue.slurm) }
        spec = spec.overridden(by: task.slurm)
        return task.resources.map { spec.requesting($0) } ?? spec
    }
}

extension SlurmSpec {
    /// These options asking for what a task's `resources` declare: its `cpus`, `mem` and `gpus` win over
    /// the `slurm:` of its queue and the top level (its own `slurm:` may not give them too), so one
    /// declaration serves both executors (docs/pipeline.md, "Resources").
    public func requesting(_ resources: Resources) -> SlurmSpec {
        var spec = self
        if let cpus = resources[Resources.cpus] { spec.cpus = Int(cpus) }
        if let bytes = resources[Resources.memory] {
            // Slurm's unit is the megabyte (MiB): rounded up, so a task never gets less than it declared.
            spec.mem = "\((bytes + (1 << 20) - 1) >> 20)M"
        }
        if let gpus = resources[Resources.gpus] { spec.gpus = Int(gpus) }
        return spec
    }
}
