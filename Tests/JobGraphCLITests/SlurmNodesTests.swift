import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Runs that use several nodes, on a real local cluster of three (three `slurmd` on this machine, 2 CPUs
/// each): each task records the node it ran on (`SLURMD_NODENAME`).
@Suite(.serialized, .localSlurmCluster(nodes: 3), .hangLimit(minutes: 5),
       .enabled(if: LocalSlurmCluster.canRun, "the local Slurm cluster needs root: scripts/slurm-local.sh installs Slurm with apt and runs its daemons as root"))
struct SlurmNodesTests {
    static let cluster = LocalSlurmCluster(nodes: 3)

    /// A task that writes its node to `NAME.node`, then waits until `count` tasks have begun: so that they
    /// all hold their CPUs at once, and each must have one of its own.
    static func recordingTask(_ name: String, count: Int, then command: String = "true", extra: String = "") -> String {
        "  \(name): {run: \"echo $SLURMD_NODENAME $SLURM_JOB_NUM_NODES > \(name).node; touch \(name).began; "
            + "until [ $(ls *.began | wc -l) -ge \(count) ]; do sleep 0.05; done; \(command)\"\(extra)}"
    }

    /// What `NAME.node` holds: the node and, in a batch job, how many nodes the job has (a worker step
    /// passes on only the task's own environment).
    static func node(_ directory: ScratchDirectory, _ name: String) -> (name: String, jobNodes: String?)? {
        guard let text = directory.read("\(name).node"), text.hasSuffix("\n") else { return nil }  // not all written yet
        let fields = text.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
        return fields.isEmpty ? nil : (fields[0], fields.count > 1 ? fields[1] : nil)
    }

    /// Allocation mode with `nodes: 2`: the four worker steps of `--jobs 4` land on both nodes of the
    /// allocation, two each. Ctrl-C then stops the tasks on both nodes, and nothing of the run is left.
    @Test func anAllocationOfTwoNodesRunsStepsOnBothAndCtrlCStopsThemAll() async throws {
        let directory = try ScratchDirectory("jobgraph-slurm-nodes")
        defer { directory.remove() }
        let tasks = ["a", "b", "c", "d"]
        try directory.write("version: 1\nslurm: {nodes: 2}\ntasks:\n"
            + tasks.map { Self.recordingTask($0, count: 4, then: "sleep 300.71") }.joined(separator: "\n") + "\n", to: "p.yaml")
        let running = try JobGraphBinary.start(["run", "p.yaml", "--jobs", "4", "--events", "events.jsonl", "--executor", "slurm",
                                                "--slurm-mode", "allocation"], in: directory, environment: Self.cluster.environment)
        #expect(await eventually(within: .seconds(60)) { tasks.allSatisfy { Self.node(directory, $0) != nil } },
                "\(running.standardOutput)\n\(running.standardError)")
        let nodes = tasks.compactMap { Self.node(directory, $0)?.name }
        #expect(Set(nodes).count == 2, "\(nodes)")
        #expect(Set(nodes).isSubset(of: Self.cluster.nodeNames))
        #expect(Dictionary(grouping: nodes) { $0 }.values.allSatisfy { $0.count == 2 }, "two slots on each node: \(nodes)")
        #expect(await eventually(within: .seconds(30)) { ProcessTable.living(withArgument: "300.71").count == 4 })

        running.send(SIGINT)
        let outcome = try await running.finish(within: .seconds(60))
        #expect(outcome.status == 130, "\(outcome.standardOutput)\n\(outcome.standardError)")
        #expect(await eventually(within: .seconds(30), every: .milliseconds(100)) {
            await Self.cluster.client("squeue", ["--noheader"]) == ""
        }, "jobs or steps left in squeue")
        #expect(await eventually(within: .seconds(30)) { ProcessTable.living(withArgument: "300.71").isEmpty },
                "a task's process outlived the run on a node")
    }

    /// Jobs mode: three tasks of 2 CPUs at once need all three nodes, and each gets one node although the
    /// top level asks for two (the allocation's setting); a task that asks for two nodes itself gets them,
    /// and its own `srun` runs across both.
    @Test func jobsModeSpreadsTheJobsAndGivesSeveralNodesOnlyToATaskThatAsks() async throws {
        let directory = try ScratchDirectory("jobgraph-slurm-nodes")
        defer { directory.remove() }
        let tasks = ["a", "b", "c"]
        try directory.write("version: 1\nslurm: {nodes: 2}\ntasks:\n"
            + tasks.map { Self.recordingTask($0, count: 3, extra: ", slurm: {cpus: 2}") }.joined(separator: "\n") + "\n"
            + "  mpi: {needs: [a, b, c], slurm: {nodes: 2}, run: \"srun --ntasks=2 --nodes=2 sh -c 'echo $SLURMD_NODENAME' > mpi.nodes\"}\n",
            to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--jobs", "4", "--executor", "slurm", "--slurm-mode", "jobs"],
                                                   in: directory, environment: Self.cluster.environment)
        #expect(outcome.status == 0, "\(outcome.standardOutput)\n\(outcome.standardError)")
        let nodes = tasks.compactMap { Self.node(directory, $0) }
        #expect(Set(nodes.map(\.name)) == Set(Self.cluster.nodeNames), "\(nodes)")
        #expect(nodes.allSatisfy { $0.jobNodes == "1" }, "a plain task's job has one node: \(nodes)")
        let mpi = (directory.read("mpi.nodes") ?? "").split(separator: "\n").map(String.init)
        #expect(mpi.count == 2 && Set(mpi).count == 2, "the task's srun ran on two nodes: \(mpi)")
        #expect(await eventually(within: .seconds(30), every: .milliseconds(100)) {
            await Self.cluster.client("squeue", ["--noheader"]) == ""
        })
    }

    /// The reattach holds across nodes: a run killed while its allocation of two nodes ran four tasks, two
    /// on each, leaves the next run that allocation; the next run ends the killed run's worker steps on
    /// both nodes, runs the four tasks again on both, and leaves no process on either.
    @Test func aKilledRunsAllocationOfTwoNodesIsReusedAndItsStepsEndOnBoth() async throws {
        let directory = try ScratchDirectory("jobgraph-slurm-nodes-reattach")
        defer { directory.remove() }
        let tasks = ["a", "b", "c", "d"]
        try directory.write("version: 1\nslurm: {nodes: 2}\ntasks:\n" + tasks.map {
            "  \($0): {run: \"echo $SLURMD_NODENAME >> \($0).nodes; until [ -e go ]; do sleep 0.0731; done; echo ok > \($0).out\", outputs: [\($0).out]}"
        }.joined(separator: "\n") + "\n", to: "p.yaml")
        let arguments = ["run", "p.yaml", "--jobs", "4", "--executor", "slurm", "--slurm-mode", "allocation"]
        let killed = try JobGraphBinary.start(arguments, in: directory, environment: Self.cluster.environment)
        let lines = { (task: String) in (directory.read("\(task).nodes") ?? "").split(separator: "\n").map(String.init) }
        #expect(await eventually(within: .seconds(60)) { tasks.allSatisfy { lines($0).count == 1 } }, "\(killed.standardOutput)\(killed.standardError)")
        #expect(Set(tasks.flatMap(lines)).count == 2, "\(tasks.map(lines))")
        killed.send(SIGKILL)
        _ = try await killed.finish(within: .seconds(60))

        let next = try JobGraphBinary.start(arguments, in: directory, environment: Self.cluster.environment)
        #expect(await eventually(within: .seconds(60)) { next.standardError.contains("reusing its allocation") }, "\(next.standardOutput)\(next.standardError)")
        try directory.write("", to: "go")
        let outcome = try await next.finish(within: .seconds(120))
        #expect(outcome.status == 0, "\(outcome.standardOutput)\n\(outcome.standardError)")
        #expect(outcome.errorLines.contains { $0.hasPrefix("slurm: run 1 died; reusing its allocation ") && $0.contains("(2 nodes, ")
            && $0.contains("; ended its 4 worker steps (") }, "\(outcome.errorLines)")
        // Each task ran twice, the second time on one of the same two nodes, which both ran tasks again.
        #expect(tasks.allSatisfy { lines($0).count == 2 && directory.read("\($0).out") == "ok\n" }, "\(tasks.map(lines))")
        #expect(Set(tasks.compactMap { lines($0).last }).count == 2, "\(tasks.map(lines))")
        #expect(await eventually(within: .seconds(30), every: .milliseconds(100)) {
            await Self.cluster.client("squeue", ["--noheader"]) == ""
        }, "jobs or steps left in squeue")
        #expect(await eventually(within: .seconds(30)) { ProcessTable.living(withArgument: "0.0731").isEmpty },
                "a killed run's task outlived its step on a node")
    }
}
