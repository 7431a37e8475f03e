import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `retry_delay` grows exponentially between attempts (contract: "retry_delay"): read from the run's own
/// event timestamps. Each gap is compared with its lower bound (a timer never fires early) and with the
/// others, as ratios, never with a wall-clock upper limit.
@Suite(.hangLimit(minutes: 2))
struct RetryDelayTests {
    @Test func theDelayBetweenAttemptsDoublesEachTime() async throws {
        // 1, 2, 4 s: each gap twice the one before, plus the time the machine took to start the attempt.
        // That lateness pulls a ratio of gaps off 2: within 1.4...2.6 while no gap is late by more than
        // 0.3 times its delay. A loaded machine can be later; a run where it was says nothing about the
        // ratios, and is made again. (A delay that did not double would be late by as much on every run.)
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              flaky: {run: "exit 1", retries: 3, retry_delay: 1}
            """, prefix: "jobgraph-retry")
        defer { folder.remove() }
        let delays = [1.0, 2.0, 4.0]
        while true {
            let run = try await folder.run()
            #expect(run.status == 1)
            let flaky = run.events.filter { $0["task"] as? String == "flaky" }
            let failed = flaky.filter { $0["to"] as? String == "failed" }.compactMap { $0["elapsed"] as? Double }
            let retried = flaky.filter { $0["from"] as? String == "failed" && $0["to"] as? String == "executing" }
                .compactMap { $0["elapsed"] as? Double }
            try #require(failed.count == 4 && retried.count == 3, "\(flaky)")
            let gaps = zip(failed, retried).map { $1 - $0 }
            for (gap, delay) in zip(gaps, delays) {
                #expect(gap >= delay - 0.001, "an attempt started early: \(gaps)")
            }
            guard zip(gaps, delays).allSatisfy({ $0 - $1 <= 0.3 * $1 }) else { continue }
            for (earlier, later) in zip(gaps, gaps.dropFirst()) {
                #expect((1.4...2.6).contains(later / earlier), "the gaps do not double: \(gaps)")
            }
            return
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
