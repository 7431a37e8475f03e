import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Signals sent to a running `jobgraph` (contract: "Exit codes and signals"). The test acts when the events
/// file or the output shows the state it needs; tasks wait on files the test creates, never on time.
@Suite(.hangLimit(minutes: 1))
struct SignalTests {
    /// Two long tasks, one with a backgrounded grandchild, each with its own marker argument, and an
    /// `always` task that must still run.
    private static func longPipeline(marker: String) -> String {
        """
        version: 1
        tasks:
          sleeper: {run: "sleep 300.\(marker)1"}
          family: {run: "sh -c 'sleep 300.\(marker)2 & sleep 300.\(marker)2'"}
          after: {needs: [sleeper], run: "touch after.ran"}
          cleanup: {needs: [sleeper, family], when: always, run: "echo cleaning up"}
        """
    }

    private static func stop(with signal: Int32, marker: String) async throws -> (JobGraphBinary.Outcome, ScratchDirectory) {
        let directory = try ScratchDirectory("jobgraph-signal")
        try directory.write(longPipeline(marker: marker), to: "p.yaml")
        let running = try JobGraphBinary.start(["run", "p.yaml", "--jobs", "2", "--events", "events.jsonl"], in: directory)
        #expect(await running.waitForTransitions(to: "executing", count: 2, in: "events.jsonl"))
        // Executing means the spawn is under way; act once the processes exist, so the test proves they end.
        #expect(await eventually {
            !ProcessTable.living(withArgument: "300.\(marker)1").isEmpty
                && ProcessTable.living(withArgument: "300.\(marker)2").count == 2
        })
        running.send(signal)
        return (try await running.finish(), directory)
    }

    @Test func sigintStopsTheRunWith130AndLeavesNoProcessBehind() async throws {
        let (outcome, directory) = try await Self.stop(with: SIGINT, marker: "71")
        defer { directory.remove() }
        #expect(outcome.status == 130)
        let lines = outcome.outputLines
        #expect(lines.contains("cleanup | cleaning up"))
        #expect(lines.contains { $0.hasPrefix("1 succeeded, 3 cancelled in ") }, "\(lines)")
        #expect(lines.last == "interrupted by SIGINT")
        #expect(!directory.exists("after.ran"))
        // jobgraph has exited: any process with a marker would have outlived it.
        #expect(ProcessTable.living(withArgument: "300.711").isEmpty)
        #expect(ProcessTable.living(withArgument: "300.712").isEmpty)
    }

    @Test func sigtermStopsTheRunWith143() async throws {
        let (outcome, directory) = try await Self.stop(with: SIGTERM, marker: "72")
        defer { directory.remove() }
        #expect(outcome.status == 143)
        #expect(outcome.outputLines.last == "terminated by SIGTERM")
        #expect(outcome.outputLines.contains("cleanup | cleaning up"))
        #expect(ProcessTable.living(withArgument: "300.721").isEmpty)
        #expect(ProcessTable.living(withArgument: "300.722").isEmpty)
    }

    @Test func aSecondSigintKillsATaskThatIgnoresSIGTERM() async throws {
        let directory = try ScratchDirectory("jobgraph-signal")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              stubborn: {run: "trap '' TERM; echo up; exec sleep 300.731"}
            """, to: "p.yaml")
        let running = try JobGraphBinary.start(["run", "p.yaml", "--events", "events.jsonl"], in: directory)
        #expect(await running.waitForOutput(containing: "stubborn | up"))
        running.send(SIGINT)
        #expect(await running.waitForOutput(containing: "interrupted (SIGINT)"))
        running.send(SIGINT)
        let outcome = try await running.finish()
        #expect(outcome.status == 130)
        #expect(running.events(in: "events.jsonl").contains { $0["task"] as? String == "stubborn" && $0["to"] as? String == "cancelled" })
        // That the second SIGINT, not the end of the 5 s grace, ended the task is a matter of time only, so
        // it is measured by Benchmarks/signal-latency.sh rather than bounded here.
        #expect(ProcessTable.living(withArgument: "300.731").isEmpty)
    }

    @Test func sigusr1HoldsNewTasksUntilSigusr2() async throws {
        let directory = try ScratchDirectory("jobgraph-signal")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              first: {priority: high, run: "until [ -e go ]; do sleep 0.01; done"}
              second: {run: "touch second.ran"}
            """, to: "p.yaml")
        let running = try JobGraphBinary.start(["run", "p.yaml", "--jobs", "1", "--progress", "plain", "--events", "events.jsonl"],
                                               in: directory)
        #expect(await running.waitForTransitions(to: "executing", in: "events.jsonl"))
        running.send(SIGUSR1)
        #expect(await running.waitForOutput(containing: "queues suspended"))
        try directory.write("", to: "go")
        #expect(await running.waitForTransitions(to: "succeeded", in: "events.jsonl"))
        // `second` is ready and a slot is free: a jobgraph that ignored SIGUSR1 would start it. Its start
        // would be announced before the resumption, in the order of the run's events: the order of the
        // lines, checked below, proves that it waited.
        #expect(!directory.exists("second.ran"))
        #expect(running.events(in: "events.jsonl").filter { $0["to"] as? String == "executing" }.count == 1)
        running.send(SIGUSR2)
        let outcome = try await running.finish()
        #expect(outcome.status == 0)
        #expect(directory.exists("second.ran"))
        let lines = outcome.outputLines
        let suspended = try #require(lines.firstIndex { $0.contains("queues suspended") })
        let firstEnded = try #require(lines.firstIndex { $0.contains("first  executing -> succeeded") })
        let resumed = try #require(lines.firstIndex { $0.contains("queues resumed") })
        let secondStarted = try #require(lines.firstIndex { $0.contains("second  ready -> executing") })
        #expect(suspended < firstEnded && firstEnded < resumed && resumed < secondStarted)
    }
}
