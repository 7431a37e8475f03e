import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The same pipelines run by the local executor and on a real one-node Slurm cluster, in both modes:
/// the tasks go through the same transitions (attempts, exit codes, errors) and the summary counts
/// agree; only the `slurm_job` field tells the runs apart.
@Suite(.serialized, .localSlurmCluster, .hangLimit(minutes: 5),
       .enabled(if: LocalSlurmCluster.canRun, "the local Slurm cluster needs root: scripts/slurm-local.sh installs Slurm with apt and runs its daemons as root"))
struct SlurmRunTests {
    enum Mode: String, CaseIterable, Sendable { case allocation, jobs }

    /// What a run showed: each task's transitions in order, the summary's counts, and the Slurm ids.
    struct Run {
        var outcome: JobGraphBinary.Outcome
        var transitions: [String: [String]]
        var slurmJobs: [String]
        var counts: String?
    }

    private static func run(_ pipeline: String, _ arguments: [String], mode: Mode?) async throws -> Run {
        let directory = try ScratchDirectory("jobgraph-slurm")
        defer { directory.remove() }
        try directory.write(pipeline, to: "p.yaml")
        return try await run(pipeline: directory, arguments, mode: mode)
    }

    /// Runs `p.yaml` in `directory`.
    private static func run(pipeline directory: ScratchDirectory, _ arguments: [String] = [], mode: Mode?) async throws -> Run {
        let executor = mode.map { ["--executor", "slurm", "--slurm-mode", $0.rawValue] } ?? ["--executor", "local"]
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--events", "events.jsonl"] + executor + arguments, in: directory,
                                                   environment: LocalSlurmCluster.environment)
        var transitions: [String: [String]] = [:]
        var slurmJobs: [String] = []
        for line in (directory.read("events.jsonl") ?? "").split(separator: "\n") {
            guard let event = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let task = event["task"] as? String else { continue }
            let exit = (event["exit_code"] as? Int).map { " exit \($0)" } ?? ""
            let error = (event["error"] as? String).map { " (\($0))" } ?? ""
            transitions[task, default: []].append("\(event["from"] ?? "?")->\(event["to"] ?? "?") #\(event["attempt"] ?? "?")\(exit)\(error)")
            if let job = event["slurm_job"] as? String { slurmJobs.append(job) }
        }
        let counts = outcome.outputLines.first { $0.contains(" in ") && ($0.contains("succeeded") || $0.contains("failed")) }
            .map { String($0[..<$0.range(of: " in ")!.lowerBound]) }
        return Run(outcome: outcome, transitions: transitions, slurmJobs: slurmJobs, counts: counts)
    }

    /// Runs `pipeline` locally and on Slurm; both must tell the same story.
    private static func expectSameRun(_ pipeline: String, _ arguments: [String] = [], mode: Mode) async throws -> (local: Run, slurm: Run) {
        let local = try await run(pipeline, arguments, mode: nil)
        let slurm = try await run(pipeline, arguments, mode: mode)
        #expect(slurm.outcome.status == local.outcome.status, "\(slurm.outcome.standardOutput)\n\(slurm.outcome.standardError)")
        #expect(slurm.transitions == local.transitions)
        #expect(slurm.counts == local.counts)
        #expect(local.slurmJobs.isEmpty)
        return (local, slurm)
    }

    @Test(arguments: Mode.allCases)
    func dependenciesFanOutsRetriesAndAnAllowedFailure(mode: Mode) async throws {
        let pipeline = """
            version: 1
            tasks:
              list: {run: "printf 'a\\\\nb\\\\n' > items.txt"}
              fan: {needs: [list], foreach: [x, y, z], run: "test -f items.txt && echo {{ item }}"}
              dyn: {needs: [list], foreach: {from: items.txt}, run: "echo dyn {{ item }}"}
              flaky: {run: "if [ -f flaky.once ]; then exit 0; fi; touch flaky.once; exit 4", retries: 2, retry_delay: 0}
              optional: {needs: [fan], run: "exit 5", allow_failure: true}
              end: {needs: [dyn, flaky, optional], run: "echo end"}
            """
        let (local, slurm) = try await Self.expectSameRun(pipeline, ["--jobs", "4"], mode: mode)
        #expect(local.outcome.status == 0)
        #expect(slurm.transitions["flaky"]?.count == 5, "\(slurm.transitions)")
        #expect(slurm.transitions["dyn[1]"] != nil)
        #expect(slurm.outcome.outputLines.contains("end | end"))
        #expect(slurm.outcome.outputLines.contains("fan[y] | y"))
        // Each attempt on the cluster names its job or step; a static fan-out is one job array in jobs mode.
        let pattern = mode == .allocation ? #/^[0-9]+\.[0-9]+$/# : #/^[0-9]+(?:_[0-9]+)?$/#
        #expect(!slurm.slurmJobs.isEmpty && slurm.slurmJobs.allSatisfy { $0.wholeMatch(of: pattern) != nil }, "\(slurm.slurmJobs)")
        if mode == .jobs {
            #expect(slurm.slurmJobs.contains { $0.hasSuffix("_2") }, "fan's 3 items were not one array: \(slurm.slurmJobs)")
        }
    }

    /// `retry_on` and the attempt's number on the cluster as locally (docs/pipeline.md, "Retries"); in jobs
    /// mode the retry's job asks for the memory `retry_scale` gives it, which Slurm tells the job.
    @Test(arguments: Mode.allCases)
    func retryOnAndTheAttemptNumber(mode: Mode) async throws {
        let pipeline = """
            version: 1
            tasks:
              flaky:
                run: 'echo "try {{ attempt }} $JOBGRAPH_ATTEMPT mem ${SLURM_MEM_PER_NODE:-none}"; [ "$JOBGRAPH_ATTEMPT" = 2 ] || exit 75'
                retries: 2
                retry_delay: 0
                retry_on: [75]
                retry_scale: {mem: 2}
                slurm: {mem: 100M}
              unlisted: {run: "exit 3", retries: 2, retry_delay: 0, retry_on: [75, timeout]}
            """
        let (local, slurm) = try await Self.expectSameRun(pipeline, ["--keep-going"], mode: mode)
        #expect(local.outcome.status == 1)
        #expect(slurm.transitions["unlisted"]?.last == "executing->failed #1 exit 3 (`exit 3` exited with code 3; not retried: retry_on [75, timeout] does not list exit code 3)",
                "\(slurm.transitions)")
        #expect(slurm.transitions["flaky"]?.last?.hasPrefix("executing->succeeded #2") == true, "\(slurm.transitions)")
        #expect(local.outcome.outputLines.contains("flaky | try 2 2 mem none"), "\(local.outcome.outputLines)")
        // A job's memory is its own; a step in the allocation has the allocation's.
        let memory = mode == .jobs ? "mem 200" : "mem"
        #expect(slurm.outcome.outputLines.contains { $0.hasPrefix("flaky | try 2 2 \(memory)") }, "\(slurm.outcome.outputLines)")
        if mode == .jobs { #expect(slurm.outcome.outputLines.contains("flaky | try 1 1 mem 100"), "\(slurm.outcome.outputLines)") }
    }

    /// A task's `resources` are its Slurm request, scaled by `retry_scale` for a retry, and its commands
    /// learn the CPUs they got (docs/pipeline.md, "Resources").
    @Test func resourcesAreTheJobsRequestAndEachRetryScalesThem() async throws {
        let pipeline = """
            version: 1
            tasks:
              sized:
                run: 'echo "try $JOBGRAPH_ATTEMPT cpus $JOBGRAPH_CPUS $SLURM_CPUS_PER_TASK mem $SLURM_MEM_PER_NODE"; [ "$JOBGRAPH_ATTEMPT" = 2 ] || exit 75'
                resources: {cpus: 2, mem: 100M}
                retries: 1
                retry_delay: 0
                retry_scale: {mem: 2, cpus: 2}
            """
        let slurm = try await Self.run(pipeline, ["--jobs", "2"], mode: .jobs)
        #expect(slurm.outcome.status == 0, "\(slurm.outcome.standardOutput)\n\(slurm.outcome.standardError)")
        #expect(slurm.outcome.outputLines.contains("sized | try 1 cpus 2 2 mem 100"), "\(slurm.outcome.outputLines)")
        #expect(slurm.outcome.outputLines.contains("sized | try 2 cpus 4 4 mem 200"), "\(slurm.outcome.outputLines)")
    }

    @Test(arguments: Mode.allCases)
    func queueLimitsAndJobsHoldOnTheCluster(mode: Mode) async throws {
        // Each task fails if more of its kind run at once than its queue or `--jobs` allow.
        let pipeline = """
            version: 1
            queues: {one: {max_concurrent: 1}}
            defaults: {run: "mkdir one.lock && sleep 0.3 && rmdir one.lock", queue: one}
            tasks:
              q1: {}
              q2: {}
              q3: {}
              w1: {queue: ~, run: "touch run.w1; test $(ls run.* | wc -l) -le 2; s=$?; sleep 0.3; rm run.w1; exit $s"}
              w2: {queue: ~, run: "touch run.w2; test $(ls run.* | wc -l) -le 2; s=$?; sleep 0.3; rm run.w2; exit $s"}
              w3: {queue: ~, run: "touch run.w3; test $(ls run.* | wc -l) -le 2; s=$?; sleep 0.3; rm run.w3; exit $s"}
            """
        let (_, slurm) = try await Self.expectSameRun(pipeline, ["--jobs", "2"], mode: mode)
        #expect(slurm.outcome.status == 0, "\(slurm.outcome.standardOutput)")
        #expect(slurm.counts == "6 succeeded")
    }

    @Test(arguments: Mode.allCases)
    func jobgraphsOwnTimeoutStopsTheTask(mode: Mode) async throws {
        let pipeline = """
            version: 1
            tasks:
              slow: {run: "sleep 60", timeout: 1s}
              after: {needs: [slow], when: always, run: "echo after"}
            """
        let (_, slurm) = try await Self.expectSameRun(pipeline, mode: mode)
        #expect(slurm.outcome.status == 1)
        #expect(slurm.transitions["slow"]?.last == "executing->failed #1 (timed out after 1s)")
        #expect(await LocalSlurmCluster.client("squeue", ["--noheader", "--states=RUNNING"]) == "")
    }

    @Test(arguments: Mode.allCases)
    func ctrlCCancelsEveryJobAndLeavesNoProcessOnTheNode(mode: Mode) async throws {
        let marker = mode == .allocation ? "81" : "82"
        let directory = try ScratchDirectory("jobgraph-slurm")
        defer { directory.remove() }
        // `setsid … &` leaves a double-forked grandchild whose parent exits at once: only the cluster's
        // cgroup tracking still knows it belongs to the task.
        try directory.write("""
            version: 1
            tasks:
              family: {run: "setsid sh -c 'exec sleep 300.\(marker)1' & sleep 300.\(marker)2"}
              other: {run: "sleep 300.\(marker)3"}
              after: {needs: [family], run: "touch after.ran"}
              cleanup: {needs: [family], when: always, run: "test -n \\"$SLURM_JOB_ID\\" && touch cleanup.ran"}
            """, to: "p.yaml")
        let running = try JobGraphBinary.start(
            ["run", "p.yaml", "--jobs", "2", "--events", "events.jsonl", "--executor", "slurm", "--slurm-mode", mode.rawValue],
            in: directory, environment: LocalSlurmCluster.environment)
        #expect(await running.waitForTransitions(to: "executing", count: 2, in: "events.jsonl"))
        #expect(await eventually(within: .seconds(30)) {
            ["1", "2", "3"].allSatisfy { !ProcessTable.living(withArgument: "300.\(marker)\($0)").isEmpty }
        })
        running.send(SIGINT)
        let outcome = try await running.finish(within: .seconds(60))
        #expect(outcome.status == 130, "\(outcome.standardOutput)\n\(outcome.standardError)")
        #expect(outcome.outputLines.contains { $0.hasPrefix("slurm: cancelled") && $0.contains("one scancel") }, "\(outcome.outputLines)")
        #expect(!directory.exists("after.ran"))
        // Contract (SIGINT): `when: always` tasks still run after Ctrl-C, on the cluster, and only then is
        // everything of the run cancelled.
        #expect(directory.exists("cleanup.ran"), "the when: always task did not run on the cluster")
        #expect(await eventually(within: .seconds(30), every: .milliseconds(100)) {
            await LocalSlurmCluster.client("squeue", ["--noheader"]) == ""
        }, "jobs or steps left in squeue")
        #expect(await eventually(within: .seconds(30)) {
            ["1", "2", "3"].allSatisfy { ProcessTable.living(withArgument: "300.\(marker)\($0)").isEmpty }
        }, "a task's process outlived the run on the node")
    }

    /// Issue 34: a run never holds the cluster forever, says what it waits for, and Ctrl-C and SIGTERM stop it
    /// while its `salloc` pends. A job holding every CPU makes the allocation pend (reason `Resources`);
    /// jobgraph says so, then the signal ends it with the interrupt's status, its pending allocation gone.
    @Test(arguments: [SIGINT, SIGTERM])
    func aSignalStopsARunWhoseAllocationPends(signal: Int32) async throws {
        let directory = try ScratchDirectory("jobgraph-slurm")
        defer { directory.remove() }
        try directory.write("version: 1\ntasks:\n  x: {run: 'touch x.ran', timeout: 2m}\n", to: "p.yaml")
        let holder = try #require(await LocalSlurmCluster.client("sbatch", ["--parsable", "--job-name=holder", "--cpus-per-task=4",
                                                                            "--time=5", "--output=/dev/null", "--wrap=sleep 300"]))
        let holderJob = holder.trimmingCharacters(in: .whitespacesAndNewlines)
        defer { Task { _ = await LocalSlurmCluster.client("scancel", [holderJob]) } }
        #expect(await eventually(within: .seconds(30)) {
            await LocalSlurmCluster.client("squeue", ["--noheader", "--jobs=\(holderJob)", "--format=%T"])?.contains("RUNNING") == true
        })
        let running = try JobGraphBinary.start(["run", "p.yaml", "--jobs", "1", "--executor", "slurm", "--slurm-mode", "allocation"],
                                               in: directory, environment: LocalSlurmCluster.environment)
        #expect(await running.waitForOutput(containing: "waiting for Slurm allocation "), "\(running.standardOutput)\n\(running.standardError)")
        let said = running.standardOutput.split(separator: "\n").first { $0.contains("waiting for Slurm allocation ") }.map(String.init) ?? ""
        #expect(said.hasSuffix(": Resources"), "\(said)")
        let pending = try #require(AllocationText.job(in: said))
        // The allocation asks for a time: a minute beyond the task's 2 minutes, rounded up to whole minutes.
        let limit = await LocalSlurmCluster.client("squeue", ["--noheader", "--jobs=\(pending)", "--format=%l|%j|%T"])
        let fields = (limit ?? "").trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|").map(String.init)
        #expect(fields.count == 3 && fields[0] == "3:00" && fields[1].hasPrefix("jobgraph-") && fields[2] == "PENDING", "\(fields)")
        let name = fields.count == 3 ? fields[1] : "jobgraph-"
        running.send(signal)
        let outcome = try await running.finish(within: .seconds(60))
        #expect(outcome.status == (signal == SIGINT ? 130 : 143), "\(outcome.standardOutput)\n\(outcome.standardError)")
        #expect(!directory.exists("x.ran"))
        #expect(await eventually(within: .seconds(30), every: .milliseconds(100)) {
            await LocalSlurmCluster.client("squeue", ["--noheader", "--format=%i"])?.trimmingCharacters(in: .whitespacesAndNewlines) == holderJob
        }, "the pending allocation is still in squeue")
        #expect(ProcessTable.living(withArgument: "--job-name=\(name)").isEmpty, "salloc outlived jobgraph")
    }

    /// Issue 34: a batch job of a killed run goes on and ends with exit 0 while the next run's attempt of the
    /// same task exits 3. Each waits for the other: the orphan ends once the new attempt has begun, and the new
    /// attempt fails once the orphan's end is written. The orphan's end must not become the new run's verdict.
    @Test(arguments: Mode.allCases)
    func anOrphanOfAKilledRunDecidesNothingInTheNext(mode: Mode) async throws {
        let directory = try ScratchDirectory("jobgraph-slurm")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              x: {run: "if [ -e first.began ]; then touch second.began; until grep -qs -- '- 0' .jobgraph/slurm/x.1*status; do sleep 0.05; done; exit 3; fi; touch first.began; until [ -e second.began ]; do sleep 0.05; done"}
            """, to: "p.yaml")
        let killed = try JobGraphBinary.start(["run", "p.yaml", "--executor", "slurm", "--slurm-mode", "jobs"],
                                              in: directory, environment: LocalSlurmCluster.environment)
        #expect(await eventually(within: .seconds(60)) { directory.exists("first.began") })
        killed.send(SIGKILL)
        _ = try await killed.finish(within: .seconds(60))
        // The orphan runs on: only the new run's attempt can end it.
        #expect(await LocalSlurmCluster.client("squeue", ["--noheader", "--states=RUNNING"])?.isEmpty == false)

        let next = try await Self.run(pipeline: directory, mode: mode)
        #expect(directory.exists("second.began"))
        #expect(next.outcome.status == 1, "\(next.outcome.standardOutput)\n\(next.outcome.standardError)")
        #expect(next.transitions["x"]?.last?.hasPrefix("executing->failed #1 exit 3 (") == true, "\(next.transitions)")
        #expect(await eventually(within: .seconds(30), every: .milliseconds(100)) {
            await LocalSlurmCluster.client("squeue", ["--noheader"]) == ""
        }, "the orphan is still in squeue")
    }

    @Test func aParallelGroupRunsInAStepOfItsOwn() async throws {
        // A `parallel` group may hold several slots' CPUs, so a run with one starts no worker steps: every
        // task is a step of its own, and the run still tells the local story.
        let pipeline = """
            version: 1
            tasks:
              both: {parallel: ["echo left", "echo right"]}
              then: {needs: [both], run: "echo then"}
            """
        let (_, slurm) = try await Self.expectSameRun(pipeline, ["--jobs", "2"], mode: .allocation)
        #expect(slurm.outcome.status == 0)
        #expect(slurm.outcome.outputLines.contains("both | left") && slurm.outcome.outputLines.contains("then | then"))
        #expect(slurm.outcome.errorLines.contains { $0.hasSuffix("each task runs as a job step in it") }, "\(slurm.outcome.errorLines)")
        #expect(Set(slurm.slurmJobs).count == 2, "\(slurm.slurmJobs)")
    }

    @Test func ctrlZStopsTheTasksOnTheNodeAndFgContinuesThem() async throws {
        // As JobControlTests, in allocation mode: the worker steps stop and continue the tasks' process groups.
        let directory = try ScratchDirectory("jobgraph-slurm")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              loop: {run: "ps -o pgid= -p $$ > loop.group; until [ -e go ]; do sleep 0.01; done; echo finished"}
              family: {run: "ps -o pgid= -p $$ > family.group; sh -c 'until [ -e go ]; do sleep 0.01; done' & wait; echo finished"}
            """, to: "p.yaml")
        let running = try JobGraphBinary.start(
            ["run", "p.yaml", "--jobs", "2", "--events", "events.jsonl", "--executor", "slurm", "--slurm-mode", "allocation"],
            in: directory, environment: LocalSlurmCluster.environment)
        func group(_ task: String) -> pid_t? { pid_t((directory.read("\(task).group") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(await eventually(within: .seconds(30)) { group("loop") != nil && group("family") != nil })
        let groups = try ["loop", "family"].map { try #require(group($0)) }
        #expect(await eventually { ProcessTable.states(inGroup: groups[1]).count >= 2 })

        running.send(SIGTSTP)
        #expect(await eventually {
            ProcessTable.state(of: running.pid) == "T" && groups.allSatisfy(ProcessTable.isStopped(group:))
        }, "jobgraph \(ProcessTable.state(of: running.pid).map(String.init) ?? "-"), groups \(groups.map { ProcessTable.states(inGroup: $0) })")
        try directory.write("", to: "go")
        #expect(groups.allSatisfy { !ProcessTable.states(inGroup: $0).isEmpty }, "a stopped task went on and ended")

        running.send(SIGCONT)
        #expect(await eventually { ProcessTable.state(of: running.pid) != "T" })
        let outcome = try await running.finish(within: .seconds(60))
        #expect(outcome.status == 0, "\(outcome.standardOutput)\n\(outcome.standardError)")
        #expect(outcome.outputLines.contains("loop | finished"))
        #expect(outcome.outputLines.contains("family | finished"))
    }

    @Test func aRunTheClusterCannotTakeIsRefusedBeforeAnythingRuns() async throws {
        let directory = try ScratchDirectory("jobgraph-slurm")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            executor: slurm
            tasks:
              one: {run: "touch one.ran", slurm: {partition: gpu}}
              two: {run: "touch two.ran", slurm: {cpus: 64, time: 9h}}
            """, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--slurm-mode", "jobs"], in: directory, environment: LocalSlurmCluster.environment)
        #expect(outcome.status == 2)
        #expect(outcome.errorLines.contains("error: task 'one': unknown Slurm partition 'gpu'; the cluster has 'debug'"), "\(outcome.errorLines)")
        #expect(outcome.errorLines.contains("error: task 'two': time 9:00:00 is more than partition 'debug' allows (2:00:00)"))
        #expect(outcome.errorLines.contains("error: task 'two': 64 CPUs is more than partition 'debug' has per node (4)"))
        #expect(!directory.exists("one.ran") && !directory.exists("two.ran"))

        try directory.write("version: 1\ntasks:\n  one: {run: \"touch one.ran\"}\n", to: "small.yaml")
        let tooMany = try await JobGraphBinary.run(["run", "small.yaml", "--executor", "slurm", "--jobs", "9"], in: directory,
                                                   environment: LocalSlurmCluster.environment)
        #expect(tooMany.status == 2)
        #expect(tooMany.errorLines == [
            "error: the run's allocation (9 × 1 CPUs): 9 CPUs is more than partition 'debug' has (4 on each of 1 nodes); lower --jobs",
        ])
        #expect(!directory.exists("one.ran"))

        let noSlurm = try await JobGraphBinary.run(["run", "p.yaml"], in: directory,
                                                   environment: LocalSlurmCluster.environment.merging(["PATH": "/nonexistent"]) { $1 })
        #expect(noSlurm.status == 2)
        #expect(noSlurm.errorLines.first?.hasPrefix("error: no 'sbatch', 'srun'") == true, "\(noSlurm.errorLines)")
    }

    @Test func aJobSlurmRejectsIsAFailedTaskWithSlurmsMessage() async throws {
        let directory = try ScratchDirectory("jobgraph-slurm")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              gpu: {run: "echo never", slurm: {sbatch_args: ["--gres=gpu:1"]}}
            """, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--executor", "slurm", "--slurm-mode", "jobs"], in: directory,
                                                   environment: LocalSlurmCluster.environment)
        #expect(outcome.status == 1)
        #expect(outcome.outputLines.contains { $0.hasPrefix("gpu failed: Slurm rejected the job: sbatch: error:") }, "\(outcome.outputLines)")
    }
}

/// The job id in "waiting for Slurm allocation 123: Resources".
enum AllocationText {
    static func job(in line: String) -> String? {
        guard let range = line.range(of: "waiting for Slurm allocation ") else { return nil }
        let id = line[range.upperBound...].prefix { $0.isNumber }
        return id.isEmpty ? nil : String(id)
    }
}
