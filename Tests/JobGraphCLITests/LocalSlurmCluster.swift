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
        let up = try Self.script("up")
        try #require(up.status == 0, "scripts/slurm-local.sh up failed: \(up.output)")
        defer { _ = try? Self.script("down") }  // a cluster that will not stop is seen by the next `up`
        try await function()
    }

    /// Suites of other test processes on this machine (another checkout's `swift test`) use the same
    /// folder, port and node: one cluster at a time, or one suite's `down` stops the other's daemons.
    /// - Returns: the lock's descriptor; closing it lets the next suite go.
    private static func waitForOtherSuites() async throws -> Int32 {
        // Close-on-exec: the daemons `up` starts must not hold the lock after the suite.
        let descriptor = open(directory + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        try #require(descriptor >= 0, "cannot open \(directory).lock: \(String(cString: strerror(errno)))")
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 { try await Task.sleep(for: .milliseconds(200)) }
        return descriptor
    }

    private static func script(_ command: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Fixtures.repositoryRoot.appendingPathComponent("scripts/slurm-local.sh").path, command]
        process.environment = scriptEnvironment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Runs a Slurm client (`squeue`, `sinfo`) against the cluster; its standard output.
    static func client(_ program: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/" + program)
        process.arguments = arguments
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}

extension Trait where Self == LocalSlurmCluster {
    /// The suite runs against a local one-node Slurm cluster, started and stopped around it.
    static var localSlurmCluster: LocalSlurmCluster { LocalSlurmCluster() }
}
