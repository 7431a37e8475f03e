import PipelineModel
import TaskGraph

extension SlurmSpec {
    /// The options of one task's batch job (jobs mode) or job step (allocation mode), as `sbatch`/`srun`
    /// arguments; the dry run shows the same list the executor passes (`SlurmPlanDescription`).
    /// - Parameters:
    ///   - niceness: from the task's QoS; a job's `--nice` orders the queue. The process's niceness on the
    ///     node comes from the submitting `sbatch` or `srun` through `PropagatePrioProcess`.
    ///   - timeout: jobgraph's own timeout in seconds; without a `time`, `--time` becomes a backstop a
    ///     minute beyond it.
    func taskArguments(mode: SlurmMode, niceness: Int32, timeout: Double?) -> [String] {
        var arguments: [String] = []
        if mode == .jobs {
            if let partition { arguments.append("--partition=\(partition)") }
            if let account { arguments.append("--account=\(account)") }
            if let nodes { arguments.append("--nodes=\(nodes)") }
            if let mem { arguments.append("--mem=\(mem)") }
            if let gpus, gpus > 0 { arguments.append("--gres=gpu:\(gpus)") }
        }
        arguments.append("--cpus-per-task=\(cpus ?? 1)")
        if let limit = time ?? timeout.map({ $0 + 60 }) { arguments.append("--time=\(Self.slurmTime(seconds: limit))") }
        // A job's --nice orders the queue; a step in the allocation is not queued.
        if niceness > 0, mode == .jobs { arguments.append("--nice=\(niceness)") }
        arguments += (mode == .jobs ? sbatchArgs : srunArgs) ?? []
        return arguments
    }

    /// The options of the run's allocation (allocation mode): `jobs` tasks of the most CPUs any task asks for.
    /// - Parameter time: seconds the allocation may last (`TaskGraph.slurmAllocationTime`), so that a run
    ///   never holds the cluster longer.
    func allocationArguments(jobs: Int, cpusPerTask: Int, time: Double) -> [String] {
        var arguments: [String] = ["--ntasks=\(jobs)", "--cpus-per-task=\(cpusPerTask)"]
        if let partition { arguments.append("--partition=\(partition)") }
        if let account { arguments.append("--account=\(account)") }
        if let nodes { arguments.append("--nodes=\(nodes)") }
        if let mem { arguments.append("--mem=\(mem)") }
        arguments.append("--time=\(Self.slurmTime(seconds: time))")
        return arguments + (sbatchArgs ?? [])
    }

    /// Seconds as Slurm's `[D-]H:MM:SS`, rounded up to whole minutes (Slurm's unit).
    static func slurmTime(seconds: Double) -> String {
        let minutes = Int((seconds / 60).rounded(.up))
        let days = minutes / 1440, hours = minutes % 1440 / 60, rest = minutes % 60
        let clock = "\(hours):\(rest < 10 ? "0" : "")\(rest):00"
        return days > 0 ? "\(days)-\(clock)" : clock
    }
}

extension Pipeline {
    /// Whether allocation mode runs the tasks in long-lived worker steps, one per `--jobs` slot: when no
    /// task that runs on the cluster is a `parallel` group (it may hold several slots' CPUs) or has
    /// `srun_args`. Otherwise each task gets a job step of its own, since workers hold their CPUs all run.
    var slurmRunsInWorkerSteps: Bool {
        tasks.allSatisfy { task in
            guard task.runsOnCluster else { return true }
            if case .parallel = task.action { return false }
            return (slurm(for: task).srunArgs ?? []).isEmpty
        }
    }

    /// The CPUs each slot of a run's allocation gets: the most any task that runs on the cluster asks for.
    var slurmCPUsPerSlot: Int {
        tasks.filter(\.runsOnCluster).map { slurm(for: $0).cpus ?? 1 }.max() ?? 1
    }
}

extension Pipeline {
    /// A task's Slurm settings as its batch job (jobs mode) gets them: `slurm(for:)`, but with `nodes`
    /// only from the task's or its queue's own `slurm:`, never the top level's (the allocation's): a plain
    /// task runs on one node, and only a task that asks for several (one that runs `srun` across them,
    /// as an MPI task does) gets them (issue 34: a job given two nodes ran its script on the first only).
    func slurmJob(for task: TaskSpec) -> SlurmSpec {
        var spec = slurm(for: task)
        let queue = task.queue.flatMap { self.queue(named: $0.value) }?.slurm
        spec.nodes = task.slurm?.nodes ?? queue?.nodes
        return spec
    }
}

extension TaskSpec {
    /// Whether the task's work goes to the cluster under the Slurm executor: shell commands that are not a
    /// service. A service's address must be known here, and built-in steps run in jobgraph's process.
    var runsOnCluster: Bool {
        service == nil && action.isShell
    }
}

extension TaskGraph {
    /// The allocation's time when a task may run without a limit and the file sets no `slurm: {time: …}`.
    static let defaultSlurmAllocationTime = 3600.0

    /// Seconds the run's allocation asks for (README, "On a Slurm cluster"): the top-level `slurm: {time: …}`
    /// when the file sets one; else the sum of every cluster task's limit (its Slurm `time`, or jobgraph's
    /// `timeout`) over all its attempts, as if nothing ran at once, plus a minute; at least an hour when some
    /// task has no limit. The executor lowers it to the partition's own limit.
    var slurmAllocationTime: Double {
        if let time = pipeline.slurm?.time { return time }
        var sum = 60.0
        var unbounded = false
        for node in nodes where node.spec.runsOnCluster {
            guard let limit = pipeline.slurm(for: node.spec).time ?? node.spec.timeout else {
                unbounded = true
                continue
            }
            for attempt in 1...(node.spec.retries + 1) {
                sum += node.spec.retryScale?.time(limit, attempt: attempt) ?? limit
            }
        }
        return unbounded ? max(sum, Self.defaultSlurmAllocationTime) : sum
    }
}
