import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 34, "Reattach on Slurm": a run after one killed by `kill -9` finds the killed run's jobs through
/// `state.db` and Slurm, takes them over in jobs mode (nothing submitted twice: `sbatch` is counted by a
/// wrapper on `PATH` in front of the real one), cancels them with `--no-reattach` or `jobgraph cancel`,
/// and in allocation mode reuses the killed run's allocation (no second `salloc`) when it is still running.
@Suite(.serialized, .localSlurmCluster, .hangLimit(minutes: 5),
       .enabled(if: LocalSlurmCluster.canRun, "the local Slurm cluster needs root: scripts/slurm-local.sh installs Slurm with apt and runs its daemons as root"))
struct SlurmReattachTests {
    /// Three tasks that say they began (`a.began`), wait for `go` and write their Slurm job's id, and one
    /// that joins them.
    static let pipeline = """
        version: 1
        tasks:
          a: {run: "touch a.began; until [ -e go ]; do sleep 0.1; done; echo $SLURM_JOB_ID > a.out", outputs: [a.out]}
          b: {run: "touch b.began; until [ -e go ]; do sleep 0.1; done; echo $SLURM_JOB_ID > b.out", outputs: [b.out]}
          c: {run: "touch c.began; until [ -e go ]; do sleep 0.1; done; echo $SLURM_JOB_ID > c.out", outputs: [c.out]}
          d: {needs: [a, b, c], run: "cat a.out b.out c.out > d.out", outputs: [d.out]}
        """

    /// A folder with the pipeline, `bin/sbatch` and `bin/salloc`, which count their calls in `sbatch.calls` and `salloc.calls`.
    static func folder() async throws -> ScratchDirectory {
        let directory = try ScratchDirectory("jobgraph-reattach")
        try directory.write(pipeline, to: "p.yaml")
        // Written by a shell of its own: a script this process wrote could be held open by a child another test spawns (ETXTBSY).
        let made = await ExternalProgram.run("/bin/sh", ["-c", #"mkdir bin && for c in sbatch salloc; do printf '#!/bin/sh\necho "$@" >>"%s/%s.calls"\nexec /usr/bin/%s "$@"\n' "$PWD" $c $c > bin/$c && chmod 755 bin/$c || exit 1; done"#],
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

    static func sallocCalls(_ directory: ScratchDirectory) -> Int {
        (directory.read("salloc.calls") ?? "").split(separator: "\n").count
    }

    /// Starts a run in `mode`, waits until the commands of `a`, `b` and `c` run on the cluster, and kills it
    /// with SIGKILL.
    /// - Returns: the Slurm jobs of the killed run (jobs mode: its three batch jobs; allocation mode: its allocation).
    static func killedRun(in directory: ScratchDirectory, mode: String) async throws -> [String] {
        let killed = try JobGraphBinary.start(["run", "p.yaml", "--jobs", "3", "--events", "killed.jsonl", "--executor", "slurm", "--slurm-mode", mode],
                                              in: directory, environment: environment(directory))
        #expect(await killed.waitForTransitions(to: "executing", count: 3, in: "killed.jsonl"), "\(killed.standardOutput)\(killed.standardError)")
        // A task is executing once the run hands it to Slurm; its command begins later. Under stress-ng, run 1
        // was once killed with c's worker step not yet up, and the next run truly said 'a' and 'b' ran.
        #expect(await Self.commandsBegan(in: directory), "\(killed.standardOutput)\(killed.standardError)")
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

    /// Waits until the commands of `a`, `b` and `c` have begun (`pipeline`).
    static func commandsBegan(in directory: ScratchDirectory) async -> Bool {
        await eventually(within: .seconds(60), every: .milliseconds(100)) { ["a", "b", "c"].allSatisfy { directory.exists("\($0).began") } }
    }

    /// Runs the pipeline again in allocation mode, lets its tasks go once it says it reuses the killed run's
    /// allocation, and expects it to succeed.
    static func runReusingTheAllocation(in directory: ScratchDirectory) async throws -> JobGraphBinary.Outcome {
        let next = try JobGraphBinary.start(["run", "p.yaml", "--jobs", "3", "--executor", "slurm", "--slurm-mode", "allocation"],
                                            in: directory, environment: environment(directory))
        // Once it says so, the killed run's steps have ended: their tasks never see `go`.
        #expect(await eventually { next.standardError.contains("reusing its allocation") }, "\(next.standardOutput)\(next.standardError)")
        try directory.write("", to: "go")
        let outcome = try await next.finish(within: .seconds(120))
        #expect(outcome.status == 0, "\(outcome.standardOutput)\n\(outcome.standardError)")
        return outcome
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

    @Test func aTaskEditedAfterTheRunWasKilledRunsAnewAndItsOldJobIsCancelled() async throws {
        let directory = try await Self.folder()
        defer { directory.remove() }
        let jobs = try await Self.killedRun(in: directory, mode: "jobs")
        let edited = Self.pipeline.replacingOccurrences(of: "echo $SLURM_JOB_ID > c.out", with: "echo edited-$SLURM_JOB_ID > c.out")
        try #require(edited != Self.pipeline)
        try directory.write(edited, to: "p.yaml")
        let next = try JobGraphBinary.start(["run", "p.yaml", "--jobs", "3", "--executor", "slurm", "--slurm-mode", "jobs"], in: directory,
                                            environment: Self.environment(directory))
        #expect(await eventually { next.standardError.contains("reattaching to 3 Slurm jobs") }, "\(next.standardOutput)\(next.standardError)")
        // Said as `c` starts, while the run waits for `go`: not only in the summary.
        let said = "slurm: task 'c' was edited after the killed run submitted job \(jobs[2]) for it: cancelled the job, and runs anew"
        #expect(await eventually { next.standardError.contains(said) }, "\(next.standardOutput)\(next.standardError)")
        try directory.write("", to: "go")
        let outcome = try await next.finish(within: .seconds(120))
        #expect(outcome.status == 0, "\(outcome.standardOutput)\n\(outcome.standardError)")
        #expect(outcome.errorLines.filter { $0 == said }.count == 1, "\(outcome.standardOutput)\n\(outcome.standardError)")
        // `a` and `b` were taken over; `c` ran its new command in a job of its own, and `d` after it.
        let written = (directory.read("d.out") ?? "").split(separator: "\n").map(String.init)
        #expect(written.count == 3 && Array(written.prefix(2)) == Array(jobs.prefix(2)), "\(written) \(jobs)")
        #expect(written.last.map { $0.hasPrefix("edited-") && !jobs.contains(String($0.dropFirst("edited-".count))) } == true, "\(written)")
        #expect(Self.sbatchCalls(directory) == 5)
        #expect(await Self.queueIsEmpty())
    }

    /// Killed between `sbatch`'s answer and writing it down: the job was written down before its submission
    /// without an id, and the next run finds it by the run's job name and its comment (the task), takes it
    /// over, and submits nothing twice. Here `bin/sbatch` submits, then holds the answer while `hold` exists.
    @Test func aJobTheKilledRunDidNotWriteDownIsFoundAndTakenOver() async throws {
        let directory = try await Self.folder()
        defer { directory.remove() }
        let made = await ExternalProgram.run("/bin/sh", ["-c", #"""
            cat > bin/sbatch <<EOF
            #!/bin/sh
            echo "\$@" >>"$PWD/sbatch.calls"
            if [ -e "$PWD/hold" ]; then
                /usr/bin/sbatch "\$@" >"$PWD/held.answer"
                while [ -e "$PWD/hold" ]; do sleep 0.1; done
                exit 1
            fi
            exec /usr/bin/sbatch "\$@"
            EOF
            """#], in: directory.path)
        try #require(made.status == 0, "\(made.errorOutput)")
        try directory.write("", to: "hold")
        let killed = try JobGraphBinary.start(["run", "p.yaml", "a", "--executor", "slurm", "--slurm-mode", "jobs"], in: directory,
                                              environment: Self.environment(directory))
        var job = ""
        #expect(await eventually(within: .seconds(60), every: .milliseconds(100)) {
            job = (directory.read("held.answer") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            return !job.isEmpty
        }, "\(killed.standardOutput)\(killed.standardError)")
        killed.send(SIGKILL)
        _ = try await killed.finish(within: .seconds(60))
        try FileManager.default.removeItem(atPath: directory.file("hold"))

        let next = try JobGraphBinary.start(["run", "p.yaml", "a", "--executor", "slurm", "--slurm-mode", "jobs"], in: directory,
                                            environment: Self.environment(directory))
        #expect(await eventually { next.standardError.contains("reattaching to 1 Slurm job") }, "\(next.standardOutput)\(next.standardError)")
        try directory.write("", to: "go")
        let outcome = try await next.finish(within: .seconds(120))
        #expect(outcome.status == 0, "\(outcome.standardOutput)\n\(outcome.standardError)")
        #expect(outcome.errorLines.contains(
            "slurm: run 1 died; reattaching to 1 Slurm job (\(job)); it was killed before it wrote down \(job), found by name and comment"),
                "\(outcome.errorLines)")
        #expect(directory.read("a.out") == job + "\n")
        #expect(Self.sbatchCalls(directory) == 1)
        #expect(await Self.queueIsEmpty())
    }

    @Test func allocationModeReusesAKilledRunsAllocation() async throws {
        let directory = try await Self.folder()
        defer { directory.remove() }
        let allocation = try await Self.killedRun(in: directory, mode: "allocation").joined()
        #expect(Self.sallocCalls(directory) == 1)
        let outcome = try await Self.runReusingTheAllocation(in: directory)
        // The steps' ids are those the killed run wrote down in state.db as its workers came up.
        let steps = (0..<3).map { "\(allocation).\($0)" }.joined(separator: " ")
        #expect(outcome.errorLines.contains {
            $0.hasPrefix("slurm: run 1 died; reusing its allocation \(allocation) (1 node, ")
                && $0.hasSuffix(" min left); ended its 3 worker steps (\(steps)), so 'a', 'b' and 'c', which were running in them, run again")
        }, "\(outcome.errorLines)")
        // Every task ran again, in the same allocation, and no second one was asked for.
        #expect(directory.read("d.out") == String(repeating: allocation + "\n", count: 3))
        #expect(Self.sallocCalls(directory) == 1)
        #expect(outcome.errorLines.contains("slurm: released allocation \(allocation) (one scancel)") || outcome.outputLines.contains("slurm: released allocation \(allocation) (one scancel)"),
                "\(outcome.standardOutput)\n\(outcome.standardError)")
        #expect(await Self.queueIsEmpty())
    }

    /// A step that a task started itself in the killed run's allocation (`srun` in its command), which the
    /// killed run could not write down, is ended with its worker steps, and the allocation is reused. The
    /// time left that the line gives is within the limit Slurm holds for the allocation.
    @Test func allocationModeEndsTheStepsATaskStartedAndReusesTheAllocation() async throws {
        let directory = try await Self.folder()
        defer { directory.remove() }
        try directory.write(Self.pipeline.replacingOccurrences(
            of: #"a: {run: "touch a.began; until [ -e go ]; do sleep 0.1; done; echo $SLURM_JOB_ID > a.out", outputs: [a.out]}"#,
            with: #"a: {run: "srun --overlap --ntasks=1 --nodes=1 sh -c 'echo $SLURM_JOB_ID.$SLURM_STEP_ID > a.step; touch a.began; until [ -e go ]; do sleep 0.1; done; echo $SLURM_JOB_ID > a.out'", outputs: [a.out]}"#),
            to: "p.yaml")
        let killed = try JobGraphBinary.start(["run", "p.yaml", "--jobs", "3", "--events", "killed.jsonl", "--executor", "slurm", "--slurm-mode", "allocation"],
                                              in: directory, environment: Self.environment(directory))
        #expect(await killed.waitForTransitions(to: "executing", count: 3, in: "killed.jsonl"), "\(killed.standardOutput)\(killed.standardError)")
        #expect(await Self.commandsBegan(in: directory), "\(killed.standardOutput)\(killed.standardError)")
        killed.send(SIGKILL)
        _ = try await killed.finish(within: .seconds(60))
        let ownStep = try #require(directory.read("a.step")?.trimmingCharacters(in: .whitespacesAndNewlines))
        let allocation = String(ownStep.prefix { $0 != "." })
        let limit = try #require(await LocalSlurmCluster.client("squeue", ["--noheader", "--jobs=\(allocation)", "--format=%l"]))
        let outcome = try await Self.runReusingTheAllocation(in: directory)
        let line = try #require(outcome.errorLines.first { $0.hasPrefix("slurm: run 1 died; reusing its allocation \(allocation) (1 node, ") },
                                "\(outcome.errorLines)")
        #expect(line.contains(" worker steps (") && line.hasSuffix(" and 1 other step (\(ownStep)), so 'a', 'b' and 'c', which were running in them, run again"), "\(line)")
        // `%l` is [D-]HH:MM:SS or MM:SS; the minutes left are at most those.
        let fields = limit.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ":").compactMap { Int($0.split(separator: "-").last ?? "") }
        let limitMinutes = fields.count == 3 ? fields[0] * 60 + fields[1] : fields.first ?? 0
        // "(1 node, 41 min left)"
        let size = line.split(separator: "(")[1].prefix { $0 != ")" }
        let left = size.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        let leftMinutes = try #require(Int(left.prefix { $0.isNumber }), "\(line)")
        #expect(limitMinutes > 0 && leftMinutes <= limitMinutes && left.hasSuffix(" min left"), "limit \(limit), \(line)")
        #expect(directory.read("d.out") == String(repeating: allocation + "\n", count: 3))
        #expect(Self.sallocCalls(directory) == 1)
        #expect(await Self.queueIsEmpty())
    }

    /// A reused allocation that Slurm ends during the run (its time limit; here a `scancel`, which takes
    /// seconds, not the minute and a half of a time limit) fails the tasks running in it with its state, as
    /// a run's own allocation does, and is not released again.
    @Test func aReusedAllocationThatEndsFailsItsTasksAndIsNotReleasedAgain() async throws {
        let directory = try await Self.folder()
        defer { directory.remove() }
        let allocation = try await Self.killedRun(in: directory, mode: "allocation").joined()
        let next = try JobGraphBinary.start(["run", "p.yaml", "--jobs", "3", "--events", "next.jsonl", "--executor", "slurm",
                                             "--slurm-mode", "allocation"], in: directory, environment: Self.environment(directory))
        #expect(await eventually { next.standardError.contains("reusing its allocation \(allocation)") }, "\(next.standardOutput)\(next.standardError)")
        #expect(await next.waitForTransitions(to: "executing", count: 3, in: "next.jsonl"), "\(next.standardOutput)\(next.standardError)")
        #expect(await LocalSlurmCluster.client("scancel", [allocation]) != nil)
        let outcome = try await next.finish(within: .seconds(120))
        #expect(outcome.status == 1, "\(outcome.standardOutput)\n\(outcome.standardError)")
        let failed = (directory.read("next.jsonl") ?? "").split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["to"] as? String == "failed" }
        #expect(failed.compactMap { $0["task"] as? String }.sorted() == ["a", "b", "c"], "\(failed)")
        #expect(failed.allSatisfy { $0["slurm_state"] as? String == "CANCELLED" }, "\(failed)")
        #expect((outcome.outputLines + outcome.errorLines).contains("slurm: allocation \(allocation) had ended (CANCELLED); nothing to release"),
                "\(outcome.standardOutput)\n\(outcome.standardError)")
        #expect(Self.sallocCalls(directory) == 1)
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

    /// A nested run (docs/cli.md, "Nested runs") writes its jobs down like any run: killed with the run it is
    /// nested in, its job is found and cancelled by `jobgraph cancel`.
    @Test func aNestedRunsJobsAreFoundOnceItIsKilled() async throws {
        let directory = try await Self.folder()
        defer { directory.remove() }
        try directory.write(Self.pipeline + """

              outer: {run: "\\"$JOBGRAPH\\" run p.yaml a --events nested.jsonl --executor slurm --slurm-mode jobs"}
            """, to: "p.yaml")
        var environment = Self.environment(directory)
        environment["JOBGRAPH"] = try JobGraphBinary.location().path
        let outer = try JobGraphBinary.start(["run", "p.yaml", "outer", "--executor", "local"], in: directory, environment: environment)
        var running: [String] = []
        #expect(await eventually(within: .seconds(60), every: .milliseconds(100)) {
            running = (await LocalSlurmCluster.client("squeue", ["--noheader", "--states=RUNNING", "--format=%i"]) ?? "")
                .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            return running.count == 1
        }, "\(running) \(outer.standardOutput)\(outer.standardError)")
        // Both jobgraphs die by SIGKILL, the nested one first: neither cancels anything.
        let nested = ProcessTable.living(withArgument: "nested.jsonl")
        #expect(nested.count == 1)
        for pid in nested { kill(pid, SIGKILL) }
        outer.send(SIGKILL)
        _ = try await outer.finish(within: .seconds(60))
        let cancelled = try await JobGraphBinary.run(["cancel", "p.yaml"], in: directory, environment: Self.environment(directory))
        #expect(cancelled.status == 0, "\(cancelled.standardError)")
        #expect(cancelled.outputLines == ["run 2 died; cancelled its 1 Slurm job (\(running.joined()))"], "\(cancelled.outputLines)")
        #expect(await Self.queueIsEmpty())
    }
}
