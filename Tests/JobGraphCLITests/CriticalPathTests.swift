import Foundation
import JobGraphTestSupport
import Testing

/// The critical path that the summary, `run-finished` and the run report give runs through a service up to
/// the moment it was ready (docs/cli.md, "run"): in `examples/photos.yaml` it stopped at the service and
/// left out `draw`, the longest task before it.
@Suite(.hangLimit(minutes: 1))
struct CriticalPathTests {
    @Test func theCriticalPathRunsThroughAServiceUpToItsReadiness() async throws {
        let directory = try ScratchDirectory("jobgraph-critical")
        defer { directory.remove() }
        // The service stays up until `use` has ended, and is stopped then: it ends after `use` started.
        try directory.write("""
            version: 1
            tasks:
              draw: {run: "echo drawn > drawn.txt"}
              server:
                needs: [draw]
                run: "touch up.flag; exec sleep 300"
                service: {ready: {file_exists: up.flag}}
              use: {needs: [server], run: "echo used"}
            """, to: "p.yaml")
        let running = try JobGraphBinary.start(["run", "p.yaml", "--events", "events.jsonl"], in: directory)
        let outcome = try await running.finish()
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.outputLines.contains("critical path: draw -> server -> use"), "\(outcome.outputLines)")
        let finished = running.events(in: "events.jsonl").first { $0["event"] as? String == "run-finished" }
        #expect(finished?["critical_path"] as? [String] == ["draw", "server", "use"])
    }
}
