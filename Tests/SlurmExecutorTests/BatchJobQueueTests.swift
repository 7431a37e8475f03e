import Execution
import JobGraphBasics
import JobGraphTestSupport
import PipelineModel
import Testing

/// Jobs mode against the fake Slurm commands: what `sbatch` is given, the ids it answers with, the
/// states `squeue` reports, how a job's end becomes the task's, and one `scancel` for a stopped run.
@Suite(.hangLimit(minutes: 2)) struct BatchJobQueueTests {
    @Test func sbatchGetsEachTasksOptionsAndAFanOutIsOneJobArray() async throws {
        let run = try await FakeSlurm.run("""
            version: 1
            slurm: {partition: debug, time: 30m, sbatch_args: ["--qos=normal"]}
            tasks:
              one: {run: "echo one says hi", qos: utility, slurm: {cpus: 2, mem: 1G}}
              fan: {needs: [one], foreach: [x, y, z], run: "echo item {{ item }}"}
            """, mode: .jobs, jobs: 3)
        defer { run.fake.directory.remove() }
        #expect(run.summary.counts[.succeeded] == 4, "\(run.observer.transitionLines)")
        let submissions = run.fake.arguments(of: "sbatch")
        let folder = run.fake.directory.path
        let slurm = folder + "/.jobgraph/slurm"
        // Every file of the run carries its token (`one.1.TOKEN.sh`): an earlier run's jobs never touch them.
        let token = try #require(submissions.first?.last?.firstMatch(of: /one\.1\.([0-9a-z]+)\.sh$/)?.1, "\(submissions)")
        #expect(submissions.first == [
            "--parsable", "--export=ALL", "--open-mode=append", "--chdir=\(folder)", "--partition=debug", "--mem=1G",
            "--cpus-per-task=2", "--time=0:30:00", "--nice=10", "--qos=normal", "--job-name=jobgraph-\(token)", "--comment=one", "--output=\(slurm)/one.1.\(token).slurm.out",
            "\(slurm)/one.1.\(token).sh",
        ], "\(run.fake.calls)")
        // `sbatch --parsable` answers `ID;CLUSTER`: the id is what comes before the `;`.
        #expect(run.jobs["one"] == "100")
        // The items start together, so they go in as one job array (`fan.array1_%a`), each item running its
        // own script; an item whose start the machine held up past the gathering pause goes in on its own.
        let fan = submissions.dropFirst()
        let common = ["--parsable", "--export=ALL", "--open-mode=append", "--chdir=\(folder)", "--partition=debug", "--cpus-per-task=1",
                      "--time=0:30:00", "--qos=normal"]
        #expect(fan.allSatisfy { Array($0.prefix(common.count)) == common }, "\(fan)")
        let array = try #require(fan.first { $0.contains { $0.hasPrefix("--array=") } }, "\(fan)")
        let items = fan.count == 1 ? 3 : 2
        #expect(array.dropFirst(common.count) == [
            "--array=0-\(items - 1)", "--job-name=jobgraph-\(token)", "--comment=fan", "--output=\(slurm)/fan.array1.\(token)_%a.slurm.out", "\(slurm)/fan.array1.\(token).sh",
        ])
        #expect(["fan[x]", "fan[y]", "fan[z]"].allSatisfy { run.jobs[$0]?.wholeMatch(of: /10[1-3](_[0-2])?/) != nil }, "\(run.jobs)")
        if fan.count == 1 { #expect(Set(["fan[x]", "fan[y]", "fan[z]"].compactMap { run.jobs[$0] }) == ["101_0", "101_1", "101_2"]) }
        // The job's log is read back as it grows and forwarded as the task's output.
        #expect(run.output(of: "one") == ["one says hi"])
        #expect(run.output(of: "fan[z]") == ["item z"])
        #expect(run.summary.executorNotes.isEmpty, "nothing was left to cancel: \(run.summary.executorNotes)")
        #expect(run.fake.arguments(of: "scancel").isEmpty)
    }

    @Test func aPendingJobIsPolledUntilItRunsAndEnds() async throws {
        // The job stays PENDING until the test releases it, once `squeue` has reported it so twice.
        let run = try await FakeSlurm.run("""
            version: 1
            tasks:
              waits: {run: "echo ran"}
            """, mode: .jobs, environment: ["FAKE_SLURM_HOLD": "1"]) { event, _, fake in
            guard case .transition(let transition) = event, transition.to == .executing else { return }
            #expect(await eventually { fake.reportedStates(of: "100").count >= 2 }, "\(fake.calls)")
            try fake.directory.write("", to: "fake-slurm/release")
        }
        defer { run.fake.directory.remove() }
        let states = run.fake.reportedStates(of: "100")
        #expect(states.prefix(2) == ["PENDING", "PENDING"], "\(states)")
        #expect(states.last == "COMPLETED", "\(states)")
        #expect(run.finalState(of: "waits") == .succeeded, "\(run.observer.transitionLines)")
        #expect(run.output(of: "waits") == ["ran"])
        // One `squeue` a pass asks for every live job at once.
        #expect(run.fake.arguments(of: "squeue").allSatisfy {
            $0 == ["--noheader", "--array", "--states=all", "--format=%i|%T|%r", "--jobs=100"]
        }, "\(run.fake.arguments(of: "squeue"))")
    }

    @Test func aFailedJobEndsItsTaskWithItsCommandsExitCode() async throws {
        let run = try await FakeSlurm.run("""
            version: 1
            tasks:
              breaks: {run: ["true", "exit 3"]}
            """, mode: .jobs)
        defer { run.fake.directory.remove() }
        let last = try #require(run.last("breaks"))
        #expect(last.to == .failed)
        #expect(last.exitCode == 3)
        #expect(last.error == "`exit 3` exited with code 3")
        #expect(last.executorJob == "100")
    }

    @Test func aJobThatNeverRanItsScriptFailsWithSlurmsAccount() async throws {
        let run = try await FakeSlurm.run("version: 1\ntasks:\n  lost: {run: \"true\"}\n", mode: .jobs,
                                          environment: ["FAKE_SLURM_FAIL": "1"])
        defer { run.fake.directory.remove() }
        let last = try #require(run.last("lost"))
        #expect(last.to == .failed)
        #expect(last.exitCode == nil)
        #expect(last.error == "Slurm job 100 ended FAILED (NonZeroExitCode)")
    }

    @Test func aSubmissionSlurmRefusesFailsTheTaskWithSlurmsWords() async throws {
        let run = try await FakeSlurm.run("version: 1\ntasks:\n  big: {run: \"true\"}\n", mode: .jobs,
                                          environment: ["FAKE_SBATCH_REJECT": "1"])
        defer { run.fake.directory.remove() }
        #expect(run.last("big")?.error
            == "Slurm rejected the job: sbatch: error: Batch job submission failed: Requested node configuration is not available")
        #expect(run.last("big")?.executorJob == nil)
    }

    @Test func ctrlCCancelsEveryLiveJobWithOneScancel() async throws {
        let executing = Locked(0)
        let run = try await FakeSlurm.run("""
            version: 1
            tasks:
              first: {run: "sleep 300.831"}
              second: {run: "sleep 300.832"}
              cleanup: {needs: [first], when: always, run: "echo cleaned"}
            """, mode: .jobs) { event, runner, fake in
            guard case .transition(let transition) = event, transition.to == .executing,
                  executing.withLock({ count in count += 1; return count }) == 2 else { return }
            #expect(await eventually {
                fake.reportedStates(of: "100").last == "RUNNING" && fake.reportedStates(of: "101").last == "RUNNING"
            }, "\(fake.calls)")
            runner.control(.interrupt)
        }
        defer { run.fake.directory.remove() }
        #expect(run.summary.stop == .interrupt)
        // Every live job in one call, before the Runner stopped each attempt; none again afterwards.
        let cancels = run.fake.arguments(of: "scancel")
        #expect(cancels.first == ["100", "101"], "\(cancels)")
        #expect(run.summary.executorNotes == ["slurm: cancelled 2 jobs (100 101) with one scancel"])
        #expect(run.finalState(of: "first") == .cancelled && run.finalState(of: "second") == .cancelled)
        // Contract (SIGINT): a `when: always` task still runs on the cluster after Ctrl-C.
        #expect(run.finalState(of: "cleanup") == .succeeded, "\(run.observer.transitionLines)")
        #expect(run.jobs["cleanup"] == "102")
        // The cancelled jobs' commands end too: the fake `scancel` kills each job's session, as Slurm would.
        #expect(await eventually {
            ProcessTable.living(withArgument: "300.831").isEmpty && ProcessTable.living(withArgument: "300.832").isEmpty
        })
    }

    /// With accounting, `sacct` answers for the run; a job it does not list yet (the database learns of it a
    /// moment after the controller) is asked of `squeue` in the same poll, so that a job that ended at once
    /// is seen at once: waiting for `sacct` made the 24-sample workflow of slurm-snakemake.sh take 23-25 s
    /// instead of 13 s, for as many status calls.
    @Test func aJobSacctDoesNotListYetIsAskedOfSqueueInTheSamePoll() async throws {
        let run = try await FakeSlurm.run("version: 1\ntasks:\n  quick: {run: \"echo done\"}\n", mode: .jobs,
                                          environment: ["FAKE_SLURM_ACCOUNTING": "1", "FAKE_SACCT_LAG": "1"])
        defer { run.fake.directory.remove() }
        #expect(run.finalState(of: "quick") == .succeeded, "\(run.observer.transitionLines)")
        #expect(run.output(of: "quick") == ["done"])
        let polls = run.fake.calls.filter { $0.hasPrefix("sacct --noheader --allocations --parsable2 --name=") || $0.hasPrefix("squeue ") }
        #expect(polls.prefix(2).map { $0.prefix(6) } == ["sacct ", "squeue"], "\(run.fake.calls)")
        #expect(run.fake.arguments(of: "squeue").allSatisfy { $0.last == "--jobs=100" }, "\(run.fake.calls)")
    }

    /// Once `sacct` lists the job, its state is `sacct`'s, and `squeue` is not asked again.
    @Test func aJobSacctListsIsFollowedBySacctAlone() async throws {
        let run = try await FakeSlurm.run("version: 1\ntasks:\n  quick: {run: \"echo done\"}\n", mode: .jobs,
                                          environment: ["FAKE_SLURM_ACCOUNTING": "1"])
        defer { run.fake.directory.remove() }
        #expect(run.finalState(of: "quick") == .succeeded, "\(run.observer.transitionLines)")
        #expect(run.last("quick")?.executorState == "COMPLETED")
        #expect(run.fake.calls.contains { $0.hasPrefix("sacct-said 100 ") }, "\(run.fake.calls)")
        #expect(run.fake.arguments(of: "squeue").isEmpty, "\(run.fake.calls)")
    }
}
