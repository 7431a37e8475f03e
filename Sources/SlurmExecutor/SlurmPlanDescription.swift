import Execution
import PipelineModel
import TaskGraph

/// What the dry run (`run --dry-run --executor slurm`) shows of a run on Slurm: the allocation or the
/// batch jobs, and each task's options, as the same `SlurmExecutor` code would pass them. Needs no cluster.
public struct SlurmPlanDescription: TaskDescribing {
    public var mode: SlurmMode
    /// The run's `--jobs`: the allocation's slots.
    public var jobs: Int

    public init(mode: SlurmMode, jobs: Int) {
        self.mode = mode
        self.jobs = jobs
    }

    public var describedColumn: String? { "slurm" }

    /// Where the tasks go, in one line above the table.
    public func describeRun(of graph: TaskGraph) -> [String] {
        let spec = graph.pipeline.slurm ?? SlurmSpec()
        switch mode {
        case .allocation:
            let arguments = spec.allocationArguments(jobs: jobs, cpusPerTask: graph.pipeline.slurmCPUsPerSlot,
                                                     time: graph.slurmAllocationTime)
            return ["on Slurm, allocation mode: salloc --no-shell \(arguments.joined(separator: " "))"
                + (graph.pipeline.slurmRunsInWorkerSteps ? "; a worker step per slot runs the tasks (srun --exact -n1)" : "; each task a step (srun --exact -n1)")]
        case .jobs:
            return ["on Slurm, jobs mode: one sbatch per task, at most \(spec.queueSize ?? 100) queued at once"]
        }
    }

    /// A task's Slurm options, or where it runs instead.
    public func describe(node index: Int, of graph: TaskGraph) -> String? {
        let node = graph.nodes[index]
        switch node.spec.action {
        case .download, .filter: return "runs in jobgraph's process"
        case .run, .parallel: break
        }
        if node.spec.service != nil { return "service: runs locally" }
        let niceness = (graph.qualityOfService(ofNode: index) ?? .default).niceness
        let spec = mode == .jobs ? graph.pipeline.slurmJob(for: node.spec) : graph.pipeline.slurm(for: node.spec)
        return spec.taskArguments(mode: mode, niceness: niceness, timeout: node.spec.timeout)
            .joined(separator: " ")
    }
}
