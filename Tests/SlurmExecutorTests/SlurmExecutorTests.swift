import Execution
import JobGraphTestSupport
import PipelineModel
@testable import SlurmExecutor
import Testing

/// Allocation mode against the fake Slurm commands: the allocation `salloc` is asked for, the `srun` of
/// each worker step or job step, the ids the attempts report, and the allocation's release.
@Suite(.hangLimit(minutes: 2)) struct SlurmExecutorTests {
    /// The waiting line gives Slurm's reason, but not its `None` for a job its scheduler has not looked at
    /// yet: "waiting for Slurm: job pending (None)" read as no reason at all.
    @Test func aJobNotScheduledYetSaysSo() {
        #expect(SlurmCluster.pendingReason("None") == "not scheduled yet")
        #expect(SlurmCluster.pendingReason("Resources") == "Resources")
    }

    @Test func workerStepsOfOneAllocationRunTheTasksAndTheAllocationIsReleased() async throws {
        let run = try await FakeSlurm.run("""
            version: 1
            slurm: {partition: debug, time: 1h, account: lab}
            tasks:
              one: {run: "echo one; echo job $SLURM_JOB_ID"}
              two: {needs: [one], run: "exit 4"}
            """, mode: .allocation)
        defer { run.fake.directory.remove() }
        // The allocation's job name is the run's own (`jobgraph-` and the run's token).
        #expect(run.fake.arguments(of: "salloc").map { $0.map { $0.hasPrefix("--job-name=jobgraph-") ? "--job-name=jobgraph-RUN" : $0 } } == [
            ["--no-shell", "--job-name=jobgraph-RUN", "--ntasks=2", "--cpus-per-task=1", "--partition=debug", "--account=lab", "--time=1:00:00"],
        ])
        #expect(run.messages == ["slurm: allocation 100 (2 × 1 CPUs); 2 worker steps in it run the tasks"])
        // One long-lived step per `--jobs` slot, each fed the tasks through its standard input.
        let workers = run.fake.arguments(of: "srun")
        #expect(workers.count == 2, "\(run.fake.calls)")
        #expect(workers.allSatisfy {
            Array($0.prefix(9)) == ["--jobid=100", "--exact", "--ntasks=1", "--nodes=1", "--cpus-per-task=1", "--quiet",
                                     "--job-name=jobgraph-worker", "/bin/sh", "-c"]
        }, "\(workers)")
        #expect(run.output(of: "one") == ["one", "job 100"])
        // A task in a worker step reports the worker's step: `JOB.STEP`.
        #expect(run.jobs["one"]?.wholeMatch(of: /100\.[0-9]+/) != nil, "\(run.jobs)")
        let two = try #require(run.last("two"))
        #expect(two.to == .failed && two.exitCode == 4 && two.error == "`exit 4` exited with code 4")
        // After the run: the allocation is released with one scancel, and the summary says so.
        #expect(run.fake.arguments(of: "scancel") == [["100"]])
        #expect(run.summary.executorNotes == ["slurm: released allocation 100 (one scancel)"])
    }

    @Test func aParallelGroupOrSrunArgsGiveEachTaskAStepOfItsOwn() async throws {
        let run = try await FakeSlurm.run("""
            version: 1
            tasks:
              both: {parallel: ["echo left", "echo right"], qos: background}
              tuned: {run: "echo tuned", timeout: 2m, slurm: {cpus: 2, srun_args: ["--mpi=none"]}}
            """, mode: .allocation)
        defer { run.fake.directory.remove() }
        #expect(run.fake.arguments(of: "salloc").first?.contains("--cpus-per-task=2") == true, "\(run.fake.calls)")
        #expect(run.messages == ["slurm: allocation 100 (2 × 2 CPUs); each task runs as a job step in it"])
        let steps = run.fake.arguments(of: "srun")
        // A step of its own per task: no `--partition` or `--nice` (the allocation has them), jobgraph's
        // timeout plus a minute as its `--time`, and the task's `srun_args`.
        let tuned = try #require(steps.first { $0.contains("--job-name=tuned") }, "\(steps)")
        #expect(Array(tuned.prefix(10)) == ["--jobid=100", "--exact", "--ntasks=1", "--nodes=1", "--quiet", "--job-name=tuned",
                                            "--cpus-per-task=2", "--time=0:03:00", "--mpi=none", "/bin/sh"])
        let both = try #require(steps.first { $0.contains("--job-name=both") }, "\(steps)")
        // A parallel group holds a CPU for each of its commands.
        #expect(Array(both.prefix(7)) == ["--jobid=100", "--exact", "--ntasks=1", "--nodes=1", "--quiet", "--job-name=both", "--cpus-per-task=2"])
        #expect(Set(run.output(of: "both")) == ["left", "right"])
        #expect(run.finalState(of: "tuned") == .succeeded && run.finalState(of: "both") == .succeeded)
        #expect(Set(run.jobs.values).count == 2, "each step has an id of its own: \(run.jobs)")
    }

    @Test func anAllocationSlurmRefusesFailsTheAttemptsWithSlurmsWords() async throws {
        let run = try await FakeSlurm.run("version: 1\ntasks:\n  one: {run: \"echo never\"}\n", mode: .allocation,
                                          environment: ["FAKE_SALLOC_REFUSE": "1"])
        defer { run.fake.directory.remove() }
        let last = try #require(run.last("one"))
        #expect(last.to == .failed)
        let error = (last.error ?? "").replacing(/--job-name=jobgraph-[0-9a-z]+/, with: "--job-name=jobgraph-RUN")
        #expect(error == "Slurm refused the run's allocation (salloc --no-shell --job-name=jobgraph-RUN --ntasks=2 --cpus-per-task=1 "
            + "--time=1:00:00): salloc: error: Job submit/allocate failed: Invalid account or account/partition combination specified")
        #expect(run.fake.arguments(of: "srun").isEmpty && run.fake.arguments(of: "scancel").isEmpty)
        #expect(run.messages.isEmpty && run.summary.executorNotes.isEmpty)
    }

    @Test func ctrlCKeepsTheAllocationForAlwaysTasksThenCancelsIt() async throws {
        let run = try await FakeSlurm.run("""
            version: 1
            tasks:
              long: {run: "sleep 300"}
              cleanup: {needs: [long], when: always, run: "echo cleaned in $SLURM_JOB_ID"}
            """, mode: .allocation) { event, runner, _ in
            if case .transition(let transition) = event, transition.task.rawValue == "long", transition.to == .executing {
                runner.control(.interrupt)
            }
        }
        defer { run.fake.directory.remove() }
        #expect(run.summary.stop == .interrupt)
        #expect(run.output(of: "cleanup") == ["cleaned in 100"])
        #expect(run.fake.arguments(of: "scancel") == [["100"]])
        #expect(run.summary.executorNotes == ["slurm: cancelled allocation 100 with all its steps (one scancel)"])
    }

    @Test func sallocsGrantIsReadFromWhatItSays() {
        #expect(SlurmExecutor.grantedJob(in: "salloc: Pending job allocation 77\nsalloc: Granted job allocation 77\n") == "77")
        #expect(SlurmExecutor.grantedJob(in: "salloc: error: Job submit/allocate failed") == nil)
        #expect(SlurmExecutor.grantedJob(in: "salloc: Granted job allocation ") == nil)
    }

    @Test func aStatusFileGivesTheStepAndHowItsCommandsEnded() {
        let commands = ["make", "make test"]
        #expect(TaskScript.read("12.3\n- 0\n", commands: commands, job: "12").slurmID == "12.3")
        #expect(TaskScript.read("12.3\n- 0\n", commands: commands, job: "12").result == .succeeded)
        let failed = TaskScript.read("12.3\n1 2\n", commands: commands, job: "12")
        #expect(failed.result == .failed(exitCode: 2, reason: "`make test` exited with code 2"))
        // Begun and not ended: the id, and no outcome.
        #expect(TaskScript.read("12.3\n", commands: commands, job: "12").result == nil)
        // A batch job's own line has no step id.
        #expect(TaskScript.read("40.\n- 0\n", commands: commands, job: "40").result == .succeeded)
    }

    /// Issue 34: an orphaned job of an earlier run that writes its end into this run's file decides nothing.
    @Test func anEndWrittenByAnotherJobIsNoEnd() {
        let commands = ["make"]
        #expect(TaskScript.read("7.1\n- 0\n", commands: commands, job: "12").result == nil)
        #expect(TaskScript.read("127.1\n- 0\n", commands: commands, job: "12").result == nil)
        #expect(TaskScript.read("7.\n- 0\n", commands: commands, job: "71").result == nil)
    }
}
