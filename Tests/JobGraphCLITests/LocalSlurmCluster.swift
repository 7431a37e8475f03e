import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A Slurm cluster of its own for a suite: `scripts/slurm-local.sh up` before the suite's tests, `down`
/// after them. Its folder, ports and node names differ from the script's defaults, so a cluster a
/// developer started by hand keeps running beside it. `.localSlurmCluster` has one node of 4 CPUs;
/// `.localSlurmCluster(nodes: 3)` has three of 2 CPUs each (three `slurmd` on this machine);
/// `.localSlurmCluster(accounting: true)` one node of 2 CPUs with accounting (`sacct`) and enforced memory.
struct LocalSlurmCluster: SuiteTrait, TestScoping {
    /// How many nodes.
    let nodes: Int
    /// Whether `sacct` answers (slurmdbd and MariaDB), and memory is enforced.
    var accounting = false

    /// The one-node cluster most suites use.
    static let oneNode = LocalSlurmCluster(nodes: 1)
    static var directory: String { oneNode.directory }
    /// The environment `jobgraph` and Slurm's clients get in the tests of the one-node cluster.
    static var environment: [String: String] { oneNode.environment }

    var directory: String {
        accounting ? "/tmp/jobgraph-slurm-tests-accounting" : nodes == 1 ? "/tmp/jobgraph-slurm-tests" : "/tmp/jobgraph-slurm-tests-\(nodes)n"
    }
    /// What the script needs: the private folder, ports and node names of the tests' own. One node offers
    /// 4 CPUs (more than a 2-core CI machine has) so tests of `--jobs` have room; several offer 2 each, so
    /// that a few 2-CPU tasks need every node.
    var scriptEnvironment: [String: String] {
        [
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "JOBGRAPH_SLURM_DIR": directory,
            "JOBGRAPH_SLURM_PORT": accounting ? "6947" : nodes == 1 ? "6927" : "6967",  // Benchmarks/slurm.sh has 6937
            "JOBGRAPH_SLURM_NODE": accounting ? "jgacct" : nodes == 1 ? "jobgraph-test" : "jgn",
            "JOBGRAPH_SLURM_CPUS": nodes == 1 && !accounting ? "4" : "2", "JOBGRAPH_SLURM_NODES": String(nodes),
            "JOBGRAPH_SLURM_ACCOUNTING": accounting ? "1" : "",
        ]
    }
    /// The environment `jobgraph` and Slurm's clients get in the tests.
    var environment: [String: String] { JobGraphBinary.environment.merging(["SLURM_CONF": directory + "/etc/slurm.conf"]) { $1 } }
    /// The nodes' names (`jgn1`, `jgn2`, …).
    var nodeNames: [String] { accounting ? ["jgacct"] : nodes == 1 ? ["jobgraph-test"] : (1...nodes).map { "jgn\($0)" } }

    /// Whether the cluster can run here: the script installs Slurm with apt and runs its daemons as root
    /// (slurmd starts each job as its submitting user).
    static var canRun: Bool { getuid() == 0 }

    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: () async throws -> Void) async throws {
        let lock = try await Self.waitForOtherSuites()
        defer { close(lock) }
        let up = await script("up")
        try #require(up.status == 0, "scripts/slurm-local.sh up failed: \(up.output)\(up.errorOutput)")
        do {
            try await function()
        } catch {
            _ = await script("down")  // a cluster that will not stop is seen by the next `up`
            throw error
        }
        _ = await script("down")
    }

    /// Suites of other test processes on this machine (another checkout's `swift test`) use the same
    /// folder, port and node: one cluster at a time, or one suite's `down` stops the other's daemons.
    /// Clusters of different sizes take turns too: on 2 cores, two at once would slow each other's tests.
    /// - Returns: the lock's descriptor; closing it lets the next suite go.
    private static func waitForOtherSuites() async throws -> Int32 {
        // Close-on-exec: the daemons `up` starts must not hold the lock after the suite.
        let lock = oneNode.directory + ".lock"
        let descriptor = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        try #require(descriptor >= 0, "cannot open \(lock): \(String(cString: strerror(errno)))")
        // Bounded: a suite elsewhere that never lets go fails this one rather than holding up the whole run.
        let deadline = ContinuousClock.now + .seconds(1200)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard ContinuousClock.now < deadline else {
                close(descriptor)
                try #require(Bool(false), "another test process held \(lock) for 20 minutes")
                break
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        return descriptor
    }

    private func script(_ command: String) async -> ExternalProgram.Result {
        // `up` may install Slurm first (apt-get), which takes minutes on a fresh machine.
        await ExternalProgram.run("/bin/bash", [Fixtures.repositoryRoot.appendingPathComponent("scripts/slurm-local.sh").path, command],
                                  environment: scriptEnvironment, within: .seconds(900))
    }

    /// Runs a Slurm client (`squeue`, `sinfo`) against the cluster; its standard output, or `nil` when it
    /// failed (a controller that does not answer is no empty queue).
    func client(_ program: String, _ arguments: [String]) async -> String? {
        let run = await ExternalProgram.run("/usr/bin/" + program, arguments, environment: environment, within: .seconds(60))
        return run.status == 0 ? run.output : nil
    }

    /// `client` of the one-node cluster.
    static func client(_ program: String, _ arguments: [String]) async -> String? {
        await oneNode.client(program, arguments)
    }
}

extension Trait where Self == LocalSlurmCluster {
    /// The suite runs against a local one-node Slurm cluster, started and stopped around it.
    static var localSlurmCluster: LocalSlurmCluster { .oneNode }

    /// The suite runs against a local cluster of `nodes` nodes (2 or 3), started and stopped around it.
    static func localSlurmCluster(nodes: Int) -> LocalSlurmCluster { LocalSlurmCluster(nodes: nodes) }

    /// The suite runs against a local one-node cluster with accounting (`sacct`) and enforced memory.
    static var localSlurmClusterWithAccounting: LocalSlurmCluster { LocalSlurmCluster(nodes: 1, accounting: true) }
}
