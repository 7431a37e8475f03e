import Execution
import JobGraphTestSupport
import PipelineModel
@testable import SlurmExecutor
import Testing

/// `retry_on` and `retry_scale` against the fake Slurm commands (docs/pipeline.md, "Retries"): the state
/// Slurm ends a job in is the failure's cause, a retry's `sbatch` asks for the scaled resources, and
/// jobgraph's own timeout of a task in a worker step is the cause `timeout`.
@Suite(.hangLimit(minutes: 2)) struct SlurmRetryTests {
    @Test func aJobSlurmEndsOutOfMemoryIsRetriedWithTwiceTheMemory() async throws {
        // The first attempt's job says Slurm ended it OUT_OF_MEMORY (its command "killed", exit 137).
        let run = try await FakeSlurm.run("""
            version: 1
            tasks:
              align:
                run: 'if [ "$JOBGRAPH_ATTEMPT" = 1 ]; then echo OUT_OF_MEMORY > "$FAKE_SLURM_DIR/jobs/$SLURM_JOB_ID.ends"; exit 137; fi; echo attempt {{ attempt }}'
                timeout: 10m
                retries: 2
                retry_delay: 0
                retry_on: [oom]
                retry_scale: {mem: 2, time: 1.5, cpus: 2}
                slurm: {mem: 1G, cpus: 2}
            """, mode: .jobs)
        defer { run.fake.directory.remove() }
        #expect(run.finalState(of: "align") == .succeeded, "\(run.observer.transitionLines)")
        let failed = try #require(run.observer.transitions.first { $0.task.rawValue == "align" && $0.to == .failed })
        #expect(failed.error == "`if [ \"$JOBGRAPH_ATTEMPT\" = 1 ]; then echo OUT_OF_MEMORY >...` exited with code 137; retrying", "\(run.fake.calls)")
        #expect(run.output(of: "align").last == "attempt 2")
        let submissions = run.fake.arguments(of: "sbatch")
        try #require(submissions.count == 2, "\(run.fake.calls)")
        // Attempt 1 as written; attempt 2 with twice the memory and CPUs, and 1.5 times the timeout (the
        // `--time` backstop is the timeout plus a minute).
        #expect(submissions[0].filter(Self.isResource) == ["--mem=1G", "--cpus-per-task=2", "--time=0:11:00"])
        #expect(submissions[1].filter(Self.isResource) == ["--mem=2048M", "--cpus-per-task=4", "--time=0:16:00"])
    }

    @Test func aJobSlurmEndsInAStateRetryOnDoesNotListFailsAtOnce() async throws {
        let run = try await FakeSlurm.run("""
            version: 1
            tasks:
              align:
                run: 'echo TIMEOUT > "$FAKE_SLURM_DIR/jobs/$SLURM_JOB_ID.ends"; exit 1'
                retries: 3
                retry_delay: 0
                retry_on: [oom, node_fail]
            """, mode: .jobs)
        defer { run.fake.directory.remove() }
        let last = try #require(run.last("align"))
        #expect(last.to == .failed && last.attempt == 1)
        #expect(last.error?.hasSuffix("exited with code 1; not retried: retry_on [oom, node_fail] does not list timeout") == true,
                "\(last.error ?? "")")
        #expect(run.fake.arguments(of: "sbatch").count == 1)
    }

    @Test func aTimeoutInAWorkerStepIsRetriedAsATimeoutWithTheScaledTimeout() async throws {
        let run = try await FakeSlurm.run("""
            version: 1
            tasks:
              slow: {run: "sleep 1000", timeout: 0.5, retries: 1, retry_delay: 0, retry_on: [timeout], retry_scale: {time: 2}}
            """, mode: .allocation)
        defer { run.fake.directory.remove() }
        let errors = run.observer.transitions.filter { $0.task.rawValue == "slow" && $0.to == .failed }.map(\.error)
        #expect(errors == ["timed out after 0.5s; retrying", "timed out after 1s"], "\(run.observer.transitionLines)")
        #expect(run.messages.first?.hasSuffix("worker steps in it run the tasks") == true, "\(run.messages)")
    }

    @Test(arguments: [("OUT_OF_MEMORY", FailureCause.oom), ("TIMEOUT", .timeout), ("NODE_FAIL", .nodeFail), ("PREEMPTED", .preempted)])
    func slurmsEndStatesAreCauses(_ state: String, _ cause: FailureCause) {
        #expect(BatchJobQueue.cause(ofState: state) == cause)
    }

    @Test func otherEndStatesAreNoCause() {
        #expect(["COMPLETED", "FAILED", "CANCELLED", "BOOT_FAIL"].allSatisfy { BatchJobQueue.cause(ofState: $0) == nil })
    }

    static func isResource(_ argument: String) -> Bool {
        argument.hasPrefix("--mem=") || argument.hasPrefix("--cpus-per-task=") || argument.hasPrefix("--time=")
    }
}
