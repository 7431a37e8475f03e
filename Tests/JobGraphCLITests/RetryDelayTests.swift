import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `retry_delay` grows exponentially between attempts (contract: "retry_delay"): read from the run's own
/// event timestamps. The gaps are compared with each other, as ratios, and with their lower bound (a timer
/// never fires early), never with a wall-clock upper limit.
@Suite(.hangLimit(minutes: 1))
struct RetryDelayTests {
    @Test func theDelayBetweenAttemptsDoublesEachTime() async throws {
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              flaky: {run: "exit 1", retries: 3, retry_delay: 0.3}
            """, prefix: "jobgraph-retry")
        defer { folder.remove() }
        let run = try await folder.run()
        #expect(run.status == 1)
        let flaky = run.events.filter { $0["task"] as? String == "flaky" }
        let failed = flaky.filter { $0["to"] as? String == "failed" }.compactMap { $0["elapsed"] as? Double }
        let retried = flaky.filter { $0["from"] as? String == "failed" && $0["to"] as? String == "executing" }
            .compactMap { $0["elapsed"] as? Double }
        try #require(failed.count == 4 && retried.count == 3, "\(flaky)")
        let gaps = zip(failed, retried).map { $1 - $0 }
        for (index, gap) in gaps.enumerated() {
            #expect(gap >= 0.3 * Double(1 << index) - 0.001, "attempt \(index + 2) started early: \(gaps)")
        }
        // 0.3, 0.6, 1.2 s: each gap about twice the one before. Load on the machine adds the same few
        // milliseconds to each, which only pulls the ratios towards 1, never past the bounds.
        for (earlier, later) in zip(gaps, gaps.dropFirst()) {
            #expect((1.4...2.6).contains(later / earlier), "the gaps do not double: \(gaps)")
        }
    }

    /// A retry waiting out its delay is cancelled at once by SIGINT or SIGTERM (docs/cli.md, "Exit codes and
    /// signals"): the delay here is an hour, so a run that waited for it would meet the suite's hang limit.
    @Test(arguments: [(SIGINT, Int32(130), "interrupted by SIGINT"), (SIGTERM, Int32(143), "terminated by SIGTERM")])
    func aSignalCancelsAPendingRetryAtOnce(_ signal: (number: Int32, status: Int32, lastLine: String)) async throws {
        let directory = try ScratchDirectory("jobgraph-retry")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              flaky: {run: "exit 1", retries: 1, retry_delay: 1h}
              cleanup: {needs: [flaky], when: always, run: "echo cleaning up"}
            """, to: "p.yaml")
        let running = try JobGraphBinary.start(["run", "p.yaml", "--events", "events.jsonl"], in: directory)
        // The first attempt's failure, with "; retrying": the retry is now pending.
        #expect(await running.waitForTransitions(to: "failed", in: "events.jsonl"))
        running.send(signal.number)
        let outcome = try await running.finish()
        #expect(outcome.status == signal.status, "\(outcome.standardError)")
        #expect(outcome.outputLines.last == signal.lastLine, "\(outcome.outputLines)")
        #expect(outcome.outputLines.contains("cleanup | cleaning up"))
        let flaky = running.events(in: "events.jsonl").filter { $0["task"] as? String == "flaky" }
        #expect(flaky.last?["to"] as? String == "cancelled", "\(flaky)")
        // No second attempt started.
        #expect(!flaky.contains { $0["from"] as? String == "failed" && $0["to"] as? String == "executing" }, "\(flaky)")
    }
}
