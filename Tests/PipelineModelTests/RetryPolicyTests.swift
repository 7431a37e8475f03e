import JobGraphBasics
import PipelineModel
import Testing

/// `retry_on`, `retry_scale` and `{{ attempt }}` as the decoder reads them, and what they decide
/// (docs/pipeline.md, "Retries"). Their mistakes are fixtures: `invalid/retry-*.yaml`, `invalid/attempt-*.yaml`.
@Suite struct RetryPolicyTests {
    @Test func retryOnAndRetryScaleAreDecodedInATaskAndFromDefaults() throws {
        let loaded = load("""
            version: 1
            defaults: {retry_on: [oom, 75], retry_scale: {mem: 2}}
            tasks:
              plain: {run: make}
              own: {run: make, retry_on: [timeout, node_fail, preempted, signal, 137], retry_scale: {time: 1.5, cpus: 0.5}}
              off: {run: make, retry_on: ~}
            """)
        #expect(loaded.lines == [])
        let plain = try #require(loaded.task("plain"))
        #expect(plain.retryOn == [.cause(.oom), .exitCode(75)])
        #expect(plain.retryScale == RetryScale(mem: 2))
        let own = try #require(loaded.task("own"))
        #expect(own.retryOn == [.cause(.timeout), .cause(.nodeFail), .cause(.preempted), .cause(.signal), .exitCode(137)])
        #expect(own.retryScale == RetryScale(time: 1.5, cpus: 0.5))
        #expect(try #require(loaded.task("off")).retryOn == nil)
    }

    @Test func retryOnListsWhatIsRetriedAndItsAbsenceRetriesEverything() throws {
        let every = try #require(loadTask("run: make").task("job"))
        #expect(every.allowsRetry(cause: nil, exitCode: 1) && every.allowsRetry(cause: .signal, exitCode: nil))
        let listed = try #require(loadTask("run: make\nretry_on: [timeout, 75]").task("job"))
        #expect(listed.allowsRetry(cause: .timeout, exitCode: nil))
        #expect(listed.allowsRetry(cause: nil, exitCode: 75))
        #expect(!listed.allowsRetry(cause: nil, exitCode: 1))
        #expect(!listed.allowsRetry(cause: .oom, exitCode: nil))
        #expect(!listed.allowsRetry(cause: nil, exitCode: nil))
    }

    @Test func attemptIsAllowedInCommandsEnvAndHooksOnly() {
        let allowed = loadTask("""
            run: echo {{ attempt }}
            env: {TRY: "{{ attempt }}"}
            on_failure: echo failed at {{ attempt }}
            """)
        #expect(allowed.lines == [])
        let inParallel = loadTask("parallel: [\"echo {{ attempt }}\", echo two]")
        #expect(inParallel.lines == [])
        let inCwd = loadTask("run: make\ncwd: \"try{{ attempt }}\"")
        #expect(inCwd.lines == ["pipeline.yaml:5:14: error: 'attempt' is only defined in a task's 'run', 'parallel', 'env', 'on_success' and 'on_failure'"])
        let field = loadTask("run: echo {{ attempt.number }}")
        #expect(field.lines == ["pipeline.yaml:4:15: error: 'attempt' is a number and has no field 'number'; write '{{ attempt }}'"])
    }

    @Test func attemptIsNoNameAParamMayTake() {
        let loaded = loadTask("run: make\nparams: {attempt: {default: \"1\"}}")
        #expect(loaded.lines.contains { $0.contains("'attempt' is reserved for the attempt's number; choose another parameter name") },
                "\(loaded.lines)")
    }

    @Test func theFirstAttemptKeepsTheResourcesAndEachRetryMultipliesThemOnceMore() {
        let spec = SlurmSpec(time: 600, cpus: 2, mem: "1G")
        let scale = RetryScale(mem: 2, time: 1.5, cpus: 1.5)
        #expect(spec.scaled(by: scale, attempt: 1) == spec)
        #expect(spec.scaled(by: nil, attempt: 3) == spec)
        let second = spec.scaled(by: scale, attempt: 2)
        #expect(second.mem == "2048M" && second.time == 900 && second.cpus == 3)
        let third = spec.scaled(by: scale, attempt: 3)
        #expect(third.mem == "4096M" && third.time == 1350 && third.cpus == 5)  // 4.5 CPUs rounded up
        // Unset memory stays unset; unset CPUs count as Slurm's one.
        let bare = SlurmSpec().scaled(by: scale, attempt: 2)
        #expect(bare.mem == nil && bare.time == nil && bare.cpus == 2)
        #expect(scale.time(60, attempt: 3) == 135)
    }

    @Test func aRetrysResourcesAreScaledByTheRuleSlurmsRequestFollows() throws {
        let loaded = load("""
            version: 1
            tasks:
              align: {run: make, retry_scale: {mem: 1.5, cpus: 2}, resources: {mem: 1G, gpus: 1}}
              bare: {run: make, retry_scale: {mem: 2, cpus: 3}}
              timed: {run: make, retry_scale: {time: 2}, resources: {cpus: 2}}
            """)
        #expect(loaded.lines == [])
        let align = try #require(loaded.task("align"))
        #expect(align.resources(attempt: 1) == align.resources)
        let third = try #require(align.resources(attempt: 3))
        // 1G × 1.5² is 2.25G; cpus, unset, count as 1; `gpus` has no factor.
        #expect(third["mem"] == (9 << 30) / 4 && third["cpus"] == 4 && third["gpus"] == 1)
        // The same rule as Slurm's `--mem` and `--cpus-per-task` for that attempt.
        let slurm = SlurmSpec().requesting(try #require(align.resources)).scaled(by: align.retryScale, attempt: 3)
        #expect(slurm.mem == "2304M" && slurm.cpus == 4)
        // An unset `mem` stays unset.
        #expect(try #require(loaded.task("bare")).resources(attempt: 2) == Resources([.init(name: "cpus", value: 3)]))
        #expect(try #require(loaded.task("timed")).resources(attempt: 4)?.cpus == 2)
        // Capped at 4096 CPUs and the largest amount.
        let huge = RetryScale(mem: 1000, cpus: 1000)
        #expect(huge.cpus(1, attempt: 50) == 4096 && huge.memory(1 << 30, attempt: 50, atMost: Resources.mostAmount) == Resources.mostAmount)
    }

    @Test func scaledValuesStopAtTheirLimits() {
        let scale = RetryScale(mem: 1000, time: 1000, cpus: 1000)
        let scaled = SlurmSpec(time: 3600, cpus: 1, mem: "1T").scaled(by: scale, attempt: 100)
        #expect(scaled.time == DurationText.longestSeconds)
        #expect(scaled.cpus == 4096)
        #expect(scaled.mem == "1000000000M")
        #expect(scale.time(1, attempt: 1000) == DurationText.longestSeconds)
    }
}
