import Foundation
import JobGraphTestSupport
import Testing

/// A failing completion hook fails the run (exit 1) while its task stays `succeeded` (contract:
/// `on_success`, "Exit codes and signals").
@Suite(.hangLimit(minutes: 1))
struct HookExitStatusTests {
    @Test func aFailingHookExitsWith1AndTheTaskStaysSucceeded() async throws {
        let directory = try ScratchDirectory("jobgraph-hook")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              build: {run: "echo built", on_success: "exit 7"}
            """, to: "p.yaml")
        let running = try JobGraphBinary.start(["run", "p.yaml", "--events", "events.jsonl"], in: directory)
        let outcome = try await running.finish()
        #expect(outcome.status == 1)
        let states = running.events(in: "events.jsonl").compactMap { $0["to"] as? String }
        #expect(states.last == "succeeded")
    }
}
