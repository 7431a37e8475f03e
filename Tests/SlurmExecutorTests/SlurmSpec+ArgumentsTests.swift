import Foundation
import JobGraphBasics
import JobGraphTestSupport
import PipelineModel
@testable import SlurmExecutor
import TaskGraph
import Testing

/// The `sbatch`, `srun` and `salloc` options the executor builds from a task's decoded `slurm:`
/// (`Tests/Fixtures/valid/slurm.yaml`), and the dry run's account of them.
@Suite struct SlurmSpecArgumentsTests {
    static func graph() throws -> TaskGraph {
        let file = Fixtures.directory.appendingPathComponent("valid/slurm.yaml")
        var diagnostics = Diagnostics()
        let graph = PipelineCheck.graph(yaml: try String(contentsOf: file, encoding: .utf8), file: "slurm.yaml", diagnostics: &diagnostics)
        return try #require(graph, "\(diagnostics.all)")
    }

    static func index(_ id: String, in graph: TaskGraph) throws -> Int {
        try #require(graph.nodes.firstIndex { $0.id.rawValue == id })
    }

    @Test func theArgumentsFollowTheMode() throws {
        let graph = try Self.graph()
        let align = graph.pipeline.slurm(for: graph.nodes[try Self.index("align", in: graph)].spec)
        #expect(align.taskArguments(mode: .jobs, niceness: 10, timeout: 90) == [
            "--partition=debug", "--mem=4G", "--cpus-per-task=2", "--time=1:30:00", "--nice=10", "--qos=normal",
        ])
        // A step runs inside the allocation: no partition, memory or queue priority of its own.
        #expect(align.taskArguments(mode: .allocation, niceness: 10, timeout: 90) == ["--cpus-per-task=2", "--time=1:30:00", "--cpu-bind=none"])
        // Without a `time`, Slurm's limit is a backstop a minute beyond jobgraph's own timeout.
        #expect(SlurmSpec().taskArguments(mode: .jobs, niceness: 0, timeout: 90) == ["--cpus-per-task=1", "--time=0:03:00"])
        #expect(SlurmSpec(partition: "debug", nodes: 2).allocationArguments(jobs: 8, cpusPerTask: 2, time: 3600)
            == ["--ntasks=8", "--cpus-per-task=2", "--partition=debug", "--nodes=2", "--time=1:00:00"])
        #expect(graph.pipeline.slurmCPUsPerSlot == 2)
        // `srun_args` need a step of the task's own.
        #expect(!graph.pipeline.slurmRunsInWorkerSteps)
    }

    /// Issue 34: a run never holds a cluster forever. The allocation's `--time` is the file's, or the sum of
    /// every cluster task's limit over its attempts (plus a minute), or at least an hour when a task has none.
    @Test func theAllocationAlwaysHasATimeLimit() throws {
        func time(_ yaml: String) throws -> Double {
            var diagnostics = Diagnostics()
            let graph = PipelineCheck.graph(yaml: yaml, file: "p.yaml", diagnostics: &diagnostics)
            return try #require(graph, "\(diagnostics.all)").slurmAllocationTime
        }
        #expect(try time("version: 1\nslurm: {time: 3h}\ntasks:\n  a: {run: 'true'}\n") == 3 * 3600)
        // 2 × 10 min, a task with 2 retries whose time grows 1.5× each (60 + 90 + 135 s), and a minute.
        #expect(try time("""
            version: 1
            tasks:
              a: {run: 'true', foreach: [1, 2], slurm: {time: 10m}}
              b: {run: 'true', timeout: 60s, retries: 2, retry_scale: {time: 1.5}}
              d: {download: {url: 'http://127.0.0.1/x', to: x}}
            """) == 1200 + 60 + 90 + 135 + 60)
        #expect(try time("version: 1\ntasks:\n  a: {run: 'true', timeout: 1m}\n  b: {run: 'true'}\n") == 3600)
    }

    @Test func slurmTimesAreWholeMinutes() {
        #expect(SlurmSpec.slurmTime(seconds: 61) == "0:02:00")
        #expect(SlurmSpec.slurmTime(seconds: 93600) == "1-2:00:00")
    }

    @Test func theDryRunDescribesWhatTheExecutorWouldPass() throws {
        let graph = try Self.graph()
        let jobs = SlurmPlanDescription(mode: .jobs, jobs: 3)
        #expect(jobs.describedColumn == "slurm")
        #expect(jobs.describeRun(of: graph) == ["on Slurm, jobs mode: one sbatch per task, at most 50 queued at once"])
        #expect(jobs.describe(node: try Self.index("align", in: graph), of: graph)
            == "--partition=debug --mem=4G --cpus-per-task=2 --time=1:30:00 --qos=normal")
        let allocation = SlurmPlanDescription(mode: .allocation, jobs: 3)
        #expect(allocation.describeRun(of: graph) == [
            "on Slurm, allocation mode: salloc --no-shell --ntasks=3 --cpus-per-task=2 --partition=debug --time=0:30:00 --qos=normal"
                + "; each task a step (srun --exact -n1)",
        ])
        #expect(allocation.describe(node: try Self.index("prepare", in: graph), of: graph) == "--cpus-per-task=1 --time=0:30:00")
    }
}
