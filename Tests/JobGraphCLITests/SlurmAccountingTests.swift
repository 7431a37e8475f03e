import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Jobs mode on a real local cluster with accounting (`sacct` answers) and enforced memory: status comes
/// from `sacct` by the run's job name, and Slurm's state of each job reaches the events (`slurm_state`),
/// the errors, and through them the history and the report. `SlurmRunTests` runs the same mode without
/// accounting, where `squeue` tells the states.
@Suite(.serialized, .localSlurmClusterWithAccounting, .hangLimit(minutes: 5),
       .enabled(if: LocalSlurmCluster.canRun, "the local Slurm cluster needs root: scripts/slurm-local.sh installs Slurm with apt and runs its daemons as root"))
struct SlurmAccountingTests {
    static let cluster = LocalSlurmCluster.localSlurmClusterWithAccounting

    /// Wrappers of `sacct` and `squeue` first on `PATH`, each logging its call to `calls.log`.
    static func countingPath(in directory: ScratchDirectory) throws -> String {
        for program in ["sacct", "squeue"] {
            try directory.write(files: ["bin/\(program)": "#!/bin/sh\necho \(program) >> \(directory.path)/calls.log\nexec /usr/bin/\(program) \"$@\"\n"])
            chmod(directory.file("bin/\(program)"), 0o755)
        }
        return directory.file("bin") + ":" + (cluster.environment["PATH"] ?? "/usr/bin:/bin")
    }

    /// A job over its `--mem` ends `OUT_OF_MEMORY`: `retry_on: [oom]` retries it with eight times the memory
    /// (`retry_scale`), and it succeeds. A job that exits 3 is `FAILED`, which `retry_on: [oom]` does not
    /// list: it fails at once. Every state comes from `sacct`, by the run's one job name.
    ///
    /// `big` is one process, `dd` with a 100 MB buffer: it was `head -c 100M /dev/zero | tail` until, in a
    /// loaded CI run, `head` went on filling the pipe while the killed `tail` was still exiting, and the
    /// kernel's second kill in the job's cgroup took the job's `slurmstepd` (dmesg), so Slurm never ended
    /// the job and the run waited past its hang guard.
    @Test func anOutOfMemoryJobIsRetriedWithMoreMemoryAndSlurmsStatesAreKept() async throws {
        let directory = try ScratchDirectory("jobgraph-slurm-accounting")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              big: {run: "dd if=/dev/zero of=/dev/null bs=100M count=1", retries: 1, retry_on: [oom], retry_scale: {mem: 8}, slurm: {mem: 20M}}
              exits: {run: "exit 3", retries: 2, retry_on: [oom]}
            """, to: "p.yaml")
        var environment = Self.cluster.environment
        environment["PATH"] = try Self.countingPath(in: directory)
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--keep-going", "--events", "events.jsonl", "--executor", "slurm",
                                                    "--slurm-mode", "jobs"], in: directory, environment: environment)
        #expect(outcome.status == 1, "\(outcome.standardOutput)\n\(outcome.standardError)")
        let ends = (directory.read("events.jsonl") ?? "").split(separator: "\n").compactMap { line in
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]  // every line is whole once the run is over
        }.filter { $0["from"] as? String == "executing" }
        func end(_ task: String, _ attempt: Int) -> [String: Any]? {
            ends.first { $0["task"] as? String == task && $0["attempt"] as? Int == attempt }
        }
        #expect(end("big", 1)?["slurm_state"] as? String == "OUT_OF_MEMORY", "\(ends)")
        #expect((end("big", 1)?["error"] as? String)?.contains("OUT_OF_MEMORY") == true, "\(ends)")
        #expect(end("big", 2)?["to"] as? String == "succeeded" && end("big", 2)?["slurm_state"] as? String == "COMPLETED", "\(ends)")
        #expect(end("exits", 1)?["slurm_state"] as? String == "FAILED", "\(ends)")
        #expect(end("exits", 1)?["exit_code"] as? Int == 3)
        #expect((end("exits", 1)?["error"] as? String)?.contains("not retried") == true, "\(ends)")
        #expect(end("exits", 2) == nil)

        // Every job of the run has the run's one name, which `sacct` was asked for.
        let job = try #require(end("big", 1)?["slurm_job"] as? String)
        let name = await Self.cluster.client("squeue", ["--noheader", "--states=all", "--jobs=\(job)", "--format=%j|%k"])
        #expect(name?.hasPrefix("jobgraph-") == true && name?.contains("|big") == true, "\(name ?? "no squeue")")
        let calls = (directory.read("calls.log") ?? "").split(separator: "\n")
        #expect(calls.contains("sacct"), "\(calls)")

        // The history keeps Slurm's word: the report shows why the first attempt failed.
        let report = try await JobGraphBinary.run(["report", "p.yaml", "--output", "report.html"], in: directory, environment: environment)
        #expect(report.status == 0, "\(report.standardError)")
        #expect(directory.read("report.html")?.contains("OUT_OF_MEMORY") == true)
    }
}
