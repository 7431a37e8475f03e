import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Retries that know why, through the binary (docs/pipeline.md, "Retries"): `retry_on` retries only the
/// causes it lists and says why it did not retry the others; `retry_scale` stretches a retry's timeout;
/// `{{ attempt }}` and `JOBGRAPH_ATTEMPT` number the attempts without changing the task's definition.
@Suite(.hangLimit(minutes: 2))
struct RetryOnTests {
    @Test func aFailureRetryOnDoesNotListFailsAtOnceAndSaysWhy() async throws {
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              build: {run: "exit 3", retries: 3, retry_delay: 0, retry_on: [timeout, 75]}
            """, prefix: "jobgraph-retry-on")
        defer { folder.remove() }
        let run = try await folder.run()
        #expect(run.status == 1)
        let build = run.events.filter { $0["task"] as? String == "build" }
        #expect(!build.contains { $0["from"] as? String == "failed" }, "no retry: \(build)")
        let why = "`exit 3` exited with code 3; not retried: retry_on [timeout, 75] does not list exit code 3"
        #expect(build.last?["to"] as? String == "failed" && build.last?["error"] as? String == why, "\(build)")
        // The end line and the summary say it too.
        #expect(run.outcome.outputLines.contains { $0.contains("build  executing -> failed") && $0.hasSuffix("exit 3, \(why))") },
                "\(run.outcome.outputLines)")
        #expect(run.outcome.outputLines.contains { $0.hasPrefix("build failed: exit 3, \(why)") }, "\(run.outcome.outputLines)")
    }

    @Test func theDryRunShowsWhatIsRetried() async throws {
        let folder = try PipelineFolder("version: 1\ntasks:\n  build: {run: make, retries: 2, retry_on: [oom, 75]}\n", prefix: "jobgraph-retry-on")
        defer { folder.remove() }
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run"], in: folder.directory)
        #expect(outcome.status == 0)
        #expect(outcome.outputLines.contains { $0.contains("run; retries 2 on oom, 75") }, "\(outcome.outputLines)")
    }

    @Test func aListedExitCodeIsRetriedAndEachAttemptKnowsItsNumberWithoutChangingTheDefinition() async throws {
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              flaky:
                run: 'echo "{{ attempt }} $JOBGRAPH_ATTEMPT $TRY" >> tries.txt; [ "$JOBGRAPH_ATTEMPT" = 3 ] || exit 75'
                env: {TRY: "try {{ attempt }}"}
                outputs: [tries.txt]
                retries: 3
                retry_delay: 0
                retry_on: [75]
                on_success: 'echo "hook {{ attempt }} $JOBGRAPH_ATTEMPT" >> tries.txt'
            """, prefix: "jobgraph-retry-on")
        defer { folder.remove() }
        let first = try await folder.run()
        #expect(first.status == 0, "\(first.outcome.outputLines)")
        #expect(folder.directory.read("tries.txt") == "1 1 try 1\n2 2 try 2\n3 3 try 3\nhook 3 3\n")
        // What was recorded is attempt 1's definition: the next run finds the task up to date.
        let second = try await folder.run()
        #expect(second.finalStates["flaky"] == "up-to-date", "\(second.events)")
    }

    @Test func aTimeoutIsRetriedWithTheTimeoutRetryScaleGives() async throws {
        // Every attempt times out: the first after 0.5 s, the second after twice that. The times come
        // from the failures' own words, not from a clock.
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              slow: {run: "sleep 1000", timeout: 0.5, retries: 1, retry_delay: 0, retry_on: [timeout], retry_scale: {time: 2}}
            """, prefix: "jobgraph-retry-on")
        defer { folder.remove() }
        let run = try await folder.run()
        #expect(run.status == 1)
        let errors = run.events.filter { $0["task"] as? String == "slow" && $0["to"] as? String == "failed" }.compactMap { $0["error"] as? String }
        #expect(errors == ["timed out after 0.5s; retrying", "timed out after 1s"], "\(run.events)")
    }

    @Test func aSignalJobgraphDidNotSendIsASignal() async throws {
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              listed: {run: '[ "$JOBGRAPH_ATTEMPT" = 2 ] || kill -TERM $$', retries: 1, retry_delay: 0, retry_on: [signal]}
              unlisted: {run: 'kill -TERM $$', retries: 1, retry_delay: 0, retry_on: [oom, 143]}
            """, prefix: "jobgraph-retry-on")
        defer { folder.remove() }
        let run = try await folder.run(["--keep-going"])
        #expect(run.status == 1)
        #expect(run.finalStates["listed"] == "succeeded", "\(run.events)")
        let unlisted = run.events.filter { $0["task"] as? String == "unlisted" }
        // Killed by SIGTERM, the shell has no exit code: 143 is what another shell would report, not a match.
        #expect(unlisted.last?["error"] as? String == "`kill -TERM $$` was killed by SIGTERM; not retried: retry_on [oom, 143] does not list signal",
                "\(unlisted)")
    }

    /// A real OOM kill: the task moves itself into a memory cgroup of 32 MB below the test's own and
    /// reads `/dev/zero` through `tail`, which keeps every byte; the kernel kills it with SIGKILL. Only
    /// where this process may make such a cgroup (root, cgroup v1's memory controller or v2 delegation).
    @Test(.enabled(if: OOMCgroup.canBeMade, "no memory cgroup can be made here"))
    func aTaskTheKernelKillsForMemoryIsOOMAndIsRetried() async throws {
        let cgroup = try #require(OOMCgroup.make())
        defer { cgroup.remove() }
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              hungry:
                run: 'if [ "$JOBGRAPH_ATTEMPT" = 1 ]; then echo $$ > \(cgroup.path)/cgroup.procs; exec tail /dev/zero; fi'
                retries: 1
                retry_delay: 0
                retry_on: [oom]
            """, prefix: "jobgraph-retry-on")
        defer { folder.remove() }
        let run = try await folder.run()
        let failed = run.events.first { $0["task"] as? String == "hungry" && $0["to"] as? String == "failed" }
        #expect((failed?["error"] as? String)?.hasSuffix("` was killed by SIGKILL (out of memory); retrying") == true, "\(run.events)")
        #expect(run.status == 0 && run.finalStates["hungry"] == "succeeded", "\(run.events)")
    }
}

/// A memory cgroup of 32 MB below this process's own, for a task to move into.
struct OOMCgroup {
    let path: String

    /// Whether one can be made here (one is made and removed).
    static var canBeMade: Bool {
        guard let cgroup = make() else { return false }
        cgroup.remove()
        return true
    }

    /// `nil` where none can be made.
    static func make() -> OOMCgroup? {
        guard let text = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8) else { return nil }
        let lines = text.split(separator: "\n")
        let name = "jobgraph-oom-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        // cgroup v1: `N:memory:/PATH`; v2: `0::/PATH`, with `memory.max`.
        if let line = lines.first(where: { $0.split(separator: ":", maxSplits: 2).dropFirst().first == "memory" }) {
            let own = String(line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)[2])
            return make("/sys/fs/cgroup/memory" + own + "/" + name, limitFile: "memory.limit_in_bytes")
        }
        if let line = lines.first(where: { $0.hasPrefix("0::") }) {
            return make("/sys/fs/cgroup" + line.dropFirst(3) + "/" + name, limitFile: "memory.max")
        }
        return nil
    }

    private static func make(_ path: String, limitFile: String) -> OOMCgroup? {
        guard mkdir(path, 0o755) == 0 else { return nil }
        let cgroup = OOMCgroup(path: path)
        guard (try? "33554432".write(toFile: path + "/" + limitFile, atomically: false, encoding: .utf8)) != nil else {
            cgroup.remove()
            return nil
        }
        return cgroup
    }

    func remove() { rmdir(path) }
}
