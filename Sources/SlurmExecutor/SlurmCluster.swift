import JobGraphSystem
import PipelineModel
import TaskGraph

/// The Slurm client programs found on `PATH` and the partitions the controller reports, checked before
/// anything runs: a run that cannot work on this cluster is refused with every reason at once (exit 2).
public struct SlurmCluster: Sendable {
    /// Why a job pends, as `squeue`'s `%r` says it, for a user: Slurm says `None` until its scheduler has
    /// looked at the job, which reads as no reason at all.
    static func pendingReason(_ reason: String) -> String {
        reason == "None" ? "not scheduled yet" : reason
    }

    /// One partition as `sinfo` describes it; the largest node counts.
    struct Partition: Sendable {
        var name: String
        var isDefault: Bool
        /// Seconds; `nil` when unlimited.
        var timeLimit: Double?
        var cpusPerNode: Int
        /// Megabytes per node.
        var memory: Int
        var nodes: Int
    }

    let sbatch: SlurmCommand
    let srun: String
    let salloc: SlurmCommand
    let squeue: SlurmCommand
    let scancel: SlurmCommand
    /// `sacct`, where accounting answers (`sacct` on `PATH` and a database behind it); `nil` elsewhere.
    let sacct: SlurmCommand?
    let partitions: [String: Partition]
    let defaultPartition: String?

    /// Finds the programs and asks the controller for its partitions.
    /// - Throws: `SlurmSetupError` when a program is missing or the controller does not answer.
    public static func connect(environment: [String: String]) throws(SlurmSetupError) -> SlurmCluster {
        let locator = ProgramLocator()
        let searchPath = environment["PATH"] ?? ProgramLocator.defaultSearchPath
        var paths: [String: String] = [:]
        var missing: [String] = []
        for name in ["sbatch", "srun", "salloc", "squeue", "scancel", "sinfo"] {
            if let path = locator.locate(name, searchPath: searchPath) { paths[name] = path } else { missing.append(name) }
        }
        guard missing.isEmpty else {
            throw SlurmSetupError(["no \(missing.map { "'\($0)'" }.joined(separator: ", ")) on PATH; install Slurm's client commands "
                + "(scripts/slurm-local.sh up starts a one-node cluster) or run with '--executor local'"])
        }
        func command(_ name: String) -> SlurmCommand { SlurmCommand(path: paths[name]!, environment: environment) }
        let output: SlurmCommand.Output
        do {
            output = try command("sinfo").run(["--noheader", "--format=%P|%l|%c|%m|%D"])
        } catch {
            throw SlurmSetupError(["cannot run '\(paths["sinfo"]!)': \(error)"])
        }
        guard output.succeeded else {
            throw SlurmSetupError(["cannot reach the Slurm controller: \(output.message.isEmpty ? "sinfo exited with \(output.status)" : output.message)"])
        }
        var partitions: [String: Partition] = [:]
        var defaultPartition: String?
        for line in output.standardOutput.split(separator: "\n") {
            let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 5 else { continue }
            let isDefault = fields[0].hasSuffix("*")
            let name = isDefault ? String(fields[0].dropLast()) : fields[0]
            if isDefault { defaultPartition = name }
            let limit = fields[1] == "infinite" ? nil : SlurmSpec.seconds(fromSlurmTime: fields[1]) ?? Double(fields[1]).map { $0 * 60 }
            let cpus = Int(fields[2].filter(\.isNumber)) ?? 0
            let memory = Int(fields[3].filter(\.isNumber)) ?? 0
            let nodes = Int(fields[4]) ?? 0
            var partition = partitions[name] ?? Partition(name: name, isDefault: isDefault, timeLimit: limit, cpusPerNode: 0, memory: 0, nodes: 0)
            partition.cpusPerNode = max(partition.cpusPerNode, cpus)
            partition.memory = max(partition.memory, memory)
            partition.nodes += nodes
            partitions[name] = partition
        }
        // Accounting is optional: without it (`accounting_storage/none`) sacct says so and fails.
        let sacct = locator.locate("sacct", searchPath: searchPath).map { SlurmCommand(path: $0, environment: environment) }
        let accounting = sacct.flatMap { sacct in
            (try? sacct.run(["--noheader", "--allocations", "--parsable2", "--starttime=now", "--format=JobID"]))?.succeeded == true ? sacct : nil
        }
        return SlurmCluster(sbatch: command("sbatch"), srun: paths["srun"]!, salloc: command("salloc"), squeue: command("squeue"),
                            scancel: command("scancel"), sacct: accounting, partitions: partitions, defaultPartition: defaultPartition)
    }

    /// Every reason the run's Slurm requests cannot be met here: an unknown partition, or a request above
    /// a partition's limits (with `EnforcePartLimits` Slurm would refuse it; without, it would pend forever).
    public func problems(in graph: TaskGraph, mode: SlurmMode, jobs: Int) -> [String] {
        var problems: [String] = []
        var seen: Set<String> = []
        /// - Parameter spreads: the CPUs may come from several nodes (the allocation's tasks), not one.
        func check(_ spec: SlurmSpec, cpus: Int, nodes: Int?, spreads: Bool = false, owner: String) {
            guard let name = spec.partition ?? defaultPartition else {
                problems.append("\(owner) names no partition and the cluster has no default one; set 'slurm: {partition: …}'")
                return
            }
            guard let partition = partitions[name] else {
                let known = partitions.keys.sorted().map { "'\($0)'" }.joined(separator: ", ")
                problems.append("\(owner): unknown Slurm partition '\(name)'; the cluster has \(known)")
                return
            }
            if let time = spec.time, let limit = partition.timeLimit, time > limit {
                problems.append("\(owner): time \(SlurmSpec.slurmTime(seconds: time)) is more than partition '\(name)' allows (\(SlurmSpec.slurmTime(seconds: limit)))")
            }
            if spreads, cpus > partition.cpusPerNode * (nodes ?? partition.nodes) {
                problems.append("\(owner): \(cpus) CPUs is more than partition '\(name)' has (\(partition.cpusPerNode) on each of \(nodes ?? partition.nodes) nodes); lower --jobs")
            } else if !spreads, cpus > partition.cpusPerNode {
                problems.append("\(owner): \(cpus) CPUs is more than partition '\(name)' has per node (\(partition.cpusPerNode))")
            }
            if let memory = spec.memoryMegabytes, memory > partition.memory {
                problems.append("\(owner): mem \(spec.mem ?? "") is more than partition '\(name)' has per node (\(partition.memory)M)")
            }
            if let nodes, nodes > partition.nodes {
                problems.append("\(owner): \(nodes) nodes is more than partition '\(name)' has (\(partition.nodes))")
            }
        }
        let top = graph.pipeline.slurm ?? SlurmSpec()
        let runsOnCluster = graph.nodes.filter(\.spec.runsOnCluster)
        if mode == .allocation {
            let cpus = graph.pipeline.slurmCPUsPerSlot
            check(top, cpus: jobs * cpus, nodes: top.nodes, spreads: true, owner: "the run's allocation (\(jobs) × \(cpus) CPUs)")
        }
        for node in runsOnCluster where seen.insert(node.spec.id.rawValue).inserted {
            let spec = mode == .jobs ? graph.pipeline.slurmJob(for: node.spec) : graph.pipeline.slurm(for: node.spec)
            check(mode == .allocation ? top.overridden(by: SlurmSpec(cpus: spec.cpus)) : spec, cpus: spec.cpus ?? 1,
                  nodes: mode == .jobs ? spec.nodes : nil, owner: "task '\(node.spec.id.rawValue)'")
        }
        return problems
    }
}

/// Why a run cannot go to Slurm, in sentences for the user; the CLI prints each and exits 2.
public struct SlurmSetupError: Error, Sendable {
    public var problems: [String]
    public init(_ problems: [String]) { self.problems = problems }
}
