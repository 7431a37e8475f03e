import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 34, "Reattach on Slurm": a run after one killed by `kill -9` finds the killed run's jobs through
/// `state.db` and Slurm, takes them over in jobs mode (nothing submitted twice: `sbatch` is counted by a
/// wrapper on `PATH` in front of the real one), cancels them with `--no-reattach` or `jobgraph cancel`,
/// and in allocation mode releases the killed run's allocation and runs its unfinished tasks again.
@Suite(.serialized, .localSlurmCluster, .hangLimit(minutes: 5),
       .enabled(if: LocalSlurmCluster.canRun, "the local Slurm cluster needs root: scripts/slurm-local.sh installs Slurm with apt and runs its daemons as root"))
struct SlurmReattachTests {
    /// Three tasks that wait for `go` and write their Slurm job's id, and one that joins them.
    static let pipeline = """
        version: 1
        tasks:
          a: {run: "until [ -e go ]; do sleep 0.1; done; echo $SLURM_JOB_ID > a.out", outputs: [a.out]}
          b: {run: "until [ -e go ]; do sleep 0.1; done; echo $SLURM_JOB_ID > b.out", outputs: [b.out]}
          c: {run: "until [ -e go ]; do sleep 0.1; done; echo $SLURM_JOB_ID > c.out", outputs: [c.out]}
          d: {needs: [a, b, c], run: "cat a.out b.out c.out > d.out", outputs: [d.out]}
        """

    /// A folder with the pipeline and `bin/sbatch`, which counts its calls in `sbatch.calls`.
    static func folder() async throws -> ScratchDirectory {
        let directory = try ScratchDirectory("jobgraph-reattach")
        try directory.write(pipeline, to: "p.yaml")
        // Written by a shell of its own: a script this process wrote could be held open by a child another test spawns (ETXTBSY).
        let made = await ExternalProgram.run("/bin/sh", ["-c", #"mkdir bin && printf '#!/bin/sh\necho "$@" >>"%s/sbatch.calls"\nexec /usr/bin/sbatch "$@"\n' "$PWD" > bin/sbatch && chmod 755 bin/sbatch"#],
                                             in: directory.path)
        try #require(made.status == 0, "\(made.errorOutput)")
        return directory
    }

    static func environment(_ directory: ScratchDirectory) -> [String: String] {
        var environment = LocalSlurmCluster.environment
        environment["PATH"] = directory.file("bin") + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        return environment
    }

    static func sbatchCalls(_ directory: ScratchDirectory) -> Int {
        (directory.read("sbatch.calls") ?? "").split(separator: "\n").count
    }

    /// Starts a run in `mode`, waits until `a`, `b` and `c` run on the cluster, and kills it with SIGKILL.
    /// - Returns: the Slurm jobs of the killed run (jobs mode: its three batch jobs; allocation mode: its allocation).
    static func killedRun(in directory: ScratchDirectory, mode: String) async throws -> [String] {
        let killed = try JobGraphBinary.start(["run", "p.yaml", "--jobs", "3", "--events", "killed.jsonl", "--executor", "slurm", "--slurm-mode", mode],
                                              in: directory, environment: environment(directory))
        #expect(await killed.waitForTransitions(to: "executing", count: 3, in: "killed.jsonl"), "\(killed.standardOutput)\(killed.standardError)")
        let expected = mode == "jobs" ? 3 : 1
        var running: [String] = []
        #expect(await eventually(within: .seconds(60), every: .milliseconds(100)) {
            running = (await LocalSlurmCluster.client("squeue", ["--noheader", "--states=RUNNING", "--format=%i"]) ?? "")
                .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            return running.count == expected
        }, "\(running)")
        killed.send(SIGKILL)
        _ = try await killed.finish(within: .seconds(60))
        return running.sorted()
    }

    static func queueIsEmpty() async -> Bool {
        await eventually(within: .seconds(30), every: .milliseconds(100)) { await LocalSlurmCluster.client("squeue", ["--noheader"]) == "" }
    }

    @Test func aRunAfterAKilledOneTakesOverItsJobsAndSubmitsOnlyWhatIsLeft() async throws {
        let directory = try await Self.folder()
        defer { directory.remove() }
        let jobs = try await Self.killedRun(in: directory, mode: "jobs")
        #expect(Self.sbatchCalls(directory) == 3)
        let next = try JobGraphBinary.start(["run", "p.yaml", "--executor", "slurm", "--slurm-mode", "jobs"], in: directory,
                                            environment: Self.environment(directory))
        // What the executor says about its set-up goes to standard error.
        #expect(await eventually { next.standardError.contains("reattaching to 3 Slurm jobs") }, "\(next.standardOutput)\(next.standardError)")
        try directory.write("", to: "go")
        let outcome = try await next.finish(within: .seconds(120))
        #expect(outcome.status == 0, "\(outcome.standardOutput)\n\(outcome.standardError)")
        #expect(outcome.errorLines.contains("slurm: run 1 died; reattaching to 3 Slurm jobs (\(jobs.joined(separator: " ")))"), "\(outcome.errorLines)")
        // Each task's output was written by the killed run's job, and only `d` was submitted anew.
        #expect(directory.read("d.out") == jobs.map { $0 + "\n" }.joined())
        #expect(Self.sbatchCalls(directory) == 4)
        #expect(await Self.queueIsEmpty())
        // Nothing is left to take over or cancel.
        let third = try await JobGraphBinary.run(["run", "p.yaml", "--executor", "slurm", "--slurm-mode", "jobs"], in: directory,
                                                 environment: Self.environment(directory))
        #expect(third.status == 0 && !third.standardError.contains("died"), "\(third.standardError)")
        #expect(Self.sbatchCalls(directory) == 4)
    }

    @Test func jobsThatEndedWhileNoJobgraphWatchedCountAsTheyEnded() async throws {
        let directory = try await Self.folder()
        defer { directory.remove() }
        let jobs = try await Self.killedRun(in: directory, mode: "jobs")
        try directory.write("", to: "go")
        #expect(await Self.queueIsEmpty())
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--executor", "slurm", "--slurm-mode", "jobs"], in: directory,
                                                   environment: Self.environment(directory))
        #expect(outcome.status == 0, "\(outcome.standardOutput)\n\(outcome.standardError)")
        #expect(outcome.errorLines.contains {
            $0.hasPrefix("slurm: run 1 died; none of its Slurm jobs is still pending or running; 3 jobs ended meanwhile")
        }, "\(outcome.errorLines)")
        #expect(directory.read("d.out") == jobs.map { $0 + "\n" }.joined())
        #expect(Self.sbatchCalls(directory) == 4)
    }

    @Test func noReattachCancelsTheKilledRunsJobsFirst() async throws {
        let directory = try await Self.folder()
        defer { directory.remove() }
        let jobs = try await Self.killedRun(in: directory, mode: "jobs")
        let next = try JobGraphBinary.start(["run", "p.yaml", "--no-reattach", "--executor", "slurm", "--slurm-mode", "jobs"], in: directory,
                                            environment: Self.environment(directory))
        #expect(await eventually { next.standardError.contains("slurm: run 1 died; cancelled its 3 Slurm jobs (\(jobs.joined(separator: " ")))") },
                "\(next.standardOutput)\(next.standardError)")
        try directory.write("", to: "go")
        let outcome = try await next.finish(within: .seconds(120))
        #expect(outcome.status == 0, "\(outcome.standardOutput)\n\(outcome.standardError)")
        #expect(Self.sbatchCalls(directory) == 7)
        let written = (directory.read("d.out") ?? "").split(separator: "\n").map(String.init)
        #expect(written.count == 3 && Set(written).isDisjoint(with: jobs), "\(written) \(jobs)")
        #expect(await Self.queueIsEmpty())
    }

    @Test func cancelStopsAKilledRunsJobsAndRefusesALiveRun() async throws {
        let directory = try await Self.folder()
        defer { directory.remove() }
        let live = try JobGraphBinary.start(["run", "p.yaml", "--events", "live.jsonl", "--executor", "slurm", "--slurm-mode", "jobs"],
                                            in: directory, environment: Self.environment(directory))
        #expect(await live.waitForTransitions(to: "executing", count: 1, in: "live.jsonl"))
        let refused = try await JobGraphBinary.run(["cancel", "p.yaml"], in: directory, environment: Self.environment(directory))
        #expect(refused.status == 2)
        #expect(refused.errorLines == ["error: a run of p.yaml is going on (pid \(live.pid)); stop it with Ctrl-C or 'kill \(live.pid)', which cancels its jobs"],
                "\(refused.errorLines)")
        live.send(SIGINT)
        #expect(try await live.finish(within: .seconds(60)).status == 130)
        #expect(await Self.queueIsEmpty())

        let jobs = try await Self.killedRun(in: directory, mode: "jobs")
        let cancelled = try await JobGraphBinary.run(["cancel", "p.yaml"], in: directory, environment: Self.environment(directory))
        #expect(cancelled.status == 0, "\(cancelled.standardError)")
        #expect(cancelled.outputLines == ["run 2 died; cancelled its 3 Slurm jobs (\(jobs.joined(separator: " ")))"], "\(cancelled.outputLines)")
        #expect(await Self.queueIsEmpty())
        let again = try await JobGraphBinary.run(["cancel", "p.yaml"], in: directory, environment: Self.environment(directory))
        #expect(again.status == 0)
        #expect(again.outputLines == ["nothing to cancel: no killed run of this pipeline left jobs in Slurm"], "\(again.outputLines)")
        #expect(!directory.exists("a.out"))
    }

    @Test func allocationModeReleasesAKilledRunsAllocationAndRunsItsTasksAgain() async throws {
        let directory = try await Self.folder()
        defer { directory.remove() }
        let allocation = try await Self.killedRun(in: directory, mode: "allocation")
        try directory.write("", to: "go")
        // The killed run's allocation holds 3 of the node's 4 CPUs: the new one is granted only once it is released.
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--jobs", "3", "--executor", "slurm", "--slurm-mode", "allocation"],
                                                   in: directory, environment: Self.environment(directory))
        #expect(outcome.status == 0, "\(outcome.standardOutput)\n\(outcome.standardError)")
        #expect(outcome.errorLines.contains {
            $0.hasPrefix("slurm: run 1 died; cancelled its 1 Slurm job (\(allocation.joined())); allocation mode cannot take over")
        }, "\(outcome.errorLines)")
        let written = (directory.read("d.out") ?? "").split(separator: "\n").map(String.init)
        #expect(written.count == 3 && !written.contains(allocation.joined()), "\(written) \(allocation)")
        #expect(await Self.queueIsEmpty())
    }

    @Test func aKilledRunWhoseAllocationIsGoneLeavesNothingToTakeOver() async throws {
        let directory = try await Self.folder()
        defer { directory.remove() }
        let allocation = try await Self.killedRun(in: directory, mode: "allocation")
        #expect(await LocalSlurmCluster.client("scancel", allocation) != nil)
        #expect(await Self.queueIsEmpty())
        try directory.write("", to: "go")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--jobs", "3", "--executor", "slurm", "--slurm-mode", "allocation"],
                                                   in: directory, environment: Self.environment(directory))
        #expect(outcome.status == 0, "\(outcome.standardOutput)\n\(outcome.standardError)")
        #expect(outcome.errorLines.contains { $0.hasPrefix("slurm: run 1 died; none of its Slurm jobs is left") }, "\(outcome.errorLines)")
        #expect((directory.read("d.out") ?? "").split(separator: "\n").count == 3)
        #expect(await Self.queueIsEmpty())
    }
}
