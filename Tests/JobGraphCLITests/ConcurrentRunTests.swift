import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Two `jobgraph run`s of one pipeline at once, through the built binary: the second is refused with
/// exit 2 and the first's pid, or waits its turn with `--wait` (contract: "State lives in `.jobgraph/`").
@Suite(.hangLimit(minutes: 1))
struct ConcurrentRunTests {
    /// `hold` runs until the test creates `release`; every run appends a line to `runs.txt`.
    static let pipeline = """
        version: 1
        tasks:
          hold: {run: "echo run >> runs.txt; until [ -e release ]; do sleep 0.02; done"}
        """

    @Test func aSecondRunIsRefusedWithExit2NamingTheFirstsPidAndWaitWaitsItsTurn() async throws {
        let folder = try PipelineFolder(Self.pipeline)
        defer { folder.remove() }
        let firstEvents = folder.nextEventsFile()
        let first = try JobGraphBinary.start(["run", "p.yaml", "--progress", "plain", "--events", firstEvents], in: folder.directory)
        #expect(await first.waitForTransitions(to: "executing", in: firstEvents))

        let refused = try await folder.run()
        #expect(refused.status == 2)
        #expect(refused.outcome.standardError.contains("pid \(first.pid)"), "\(refused.outcome.standardError)")
        #expect(refused.outcome.standardError.contains("--wait"))
        #expect(refused.events.isEmpty)
        #expect(folder.directory.read("runs.txt") == "run\n", "the refused run must start nothing")

        // While the first holds the state, `history` reads it and shows that run as running.
        let history = try await folder.history()
        #expect(history.outputLines.contains { $0.contains("#1") && $0.contains("running") }, "\(history.outputLines)")

        let waitingEvents = folder.nextEventsFile()
        let waiting = try JobGraphBinary.start(["run", "p.yaml", "--wait", "--progress", "plain", "--events", waitingEvents],
                                               in: folder.directory)
        // The waiting run must not start while the first holds the lock: once it waits for the lock, it has
        // started nothing.
        #expect(await eventually { ProcessTable.waitsForLock(waiting.pid, on: folder.directory.file(".jobgraph/lock")) })
        #expect(folder.directory.read("runs.txt") == "run\n")
        #expect(!folder.directory.exists(waitingEvents) || waiting.events(in: waitingEvents).isEmpty)

        try folder.write("", to: "release")
        #expect(try await first.finish().status == 0)
        let waited = try await waiting.finish()
        #expect(waited.status == 0, "\(waited.standardError)")
        #expect(folder.directory.read("runs.txt") == "run\nrun\n")

        let runs = try await folder.history(["--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(runs.standardOutput.utf8)) as? [String: Any])
        #expect((report["runs"] as? [[String: Any]])?.compactMap { $0["outcome"] as? String } == ["succeeded", "succeeded"])
    }

    @Test func theLockDiesWithAKilledHolderSoTheNextRunNeedsNoCleanup() async throws {
        let folder = try PipelineFolder(Self.pipeline)
        defer { folder.remove() }
        let events = folder.nextEventsFile()
        let first = try JobGraphBinary.start(["run", "p.yaml", "--progress", "plain", "--events", events], in: folder.directory)
        #expect(await first.waitForTransitions(to: "executing", in: events))
        first.send(SIGKILL)
        _ = try await first.finish()

        try folder.write("", to: "release")
        let next = try await folder.run()
        #expect(next.status == 0, "\(next.outcome.standardError)")
        #expect(next.finalStates == ["hold": "succeeded"])
    }
}
