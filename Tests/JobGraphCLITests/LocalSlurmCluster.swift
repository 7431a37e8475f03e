import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A one-node Slurm cluster of its own for a suite: `scripts/slurm-local.sh up` before the suite's tests,
/// `down` after them. Its folder, ports and node name differ from the script's defaults, so a cluster a
/// developer started by hand keeps running beside it.
struct LocalSlurmCluster: SuiteTrait, TestScoping {
    static let directory = "/tmp/jobgraph-slurm-tests"
    /// What the script needs: the private folder, a port and node name of the tests' own, and 4 CPUs
    /// (more than a 2-core CI machine has) so tests of `--jobs` have room.
    static let scriptEnvironment = [
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "JOBGRAPH_SLURM_DIR": directory,
        "JOBGRAPH_SLURM_PORT": "6927", "JOBGRAPH_SLURM_NODE": "jobgraph-test", "JOBGRAPH_SLURM_CPUS": "4",
    ]
    /// The environment `jobgraph` and Slurm's clients get in the tests.
    static let environment = JobGraphBinary.environment.merging(["SLURM_CONF": directory + "/etc/slurm.conf"]) { $1 }

    /// Whether the cluster can run here: the script installs Slurm with apt and runs its daemons as root
    /// (slurmd starts each job as its submitting user).
    static var canRun: Bool { getuid() == 0 }

    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: () async throws -> Void) async throws {
        let lock = try await Self.waitForOtherSuites()
        defer { close(lock) }
        let up = await Self.script("up")
        try #require(up.status == 0, "scripts/slurm-local.sh up failed: \(up.output)\(up.errorOutput)")
        do {
            try await function()
        } catch {
            _ = await Self.script("down")  // a cluster that will not stop is seen by the next `up`
            throw error
        }
        _ = await Self.script("down")
    }

    /// Suites of other test processes on this machine (another checkout's `swift test`) use the same
    /// folder, port and node: one cluster at a time, or one suite's `down` stops the other's daemons.
    /// - Returns: the lock's descriptor; closing it lets the next suite go.
    private static func waitForOtherSuites() async throws -> Int32 {
        // Close-on-exec: the daemons `up` starts must not hold the lock after the suite.
        let descriptor = open(directory + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        try #require(descriptor >= 0, "cannot open \(directory).lock: \(String(cString: strerror(errno)))")
        // Bounded: a suite elsewhere that never lets go fails this one rather than holding up the whole run.
        let deadline = ContinuousClock.now + .seconds(1200)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard ContinuousClock.now < deadline else {
                close(descriptor)
                try #require(Bool(false), "another test process held \(directory).lock for 20 minutes")
                break
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        return descriptor
    }

    private static func script(_ command: String) async -> ExternalProgram.Result {
        // `up` may install Slurm first (apt-get), which takes minutes on a fresh machine.
        await ExternalProgram.run("/bin/bash", [Fixtures.repositoryRoot.appendingPathComponent("scripts/slurm-local.sh").path, command],
                                  environment: scriptEnvironment, within: .seconds(900))
    }

    /// Runs a Slurm client (`squeue`, `sinfo`) against the cluster; its standard output, or `nil` when it
    /// failed (a controller that does not answer is no empty queue).
    static func client(_ program: String, _ arguments: [String]) async -> String? {
        let run = await ExternalProgram.run("/usr/bin/" + program, arguments, environment: environment, within: .seconds(60))
        return run.status == 0 ? run.output : nil
    }
}

extension Trait where Self == LocalSlurmCluster {
    /// The suite runs against a local one-node Slurm cluster, started and stopped around it.
    static var localSlurmCluster: LocalSlurmCluster { LocalSlurmCluster() }
}
