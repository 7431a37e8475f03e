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
        #expect(await eventually { ProcessTable.waitsForLock(waiting.pid, on: folder.directory.file(".jobgraph/p.yaml.lock")) })
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

    @Test func twoPipelineFilesInOneFolderNeverBlockEachOther() async throws {
        let folder = try PipelineFolder(Self.pipeline)
        defer { folder.remove() }
        try folder.write("""
            version: 1
            tasks:
              build: {run: "echo other >> other.txt"}
            """, to: "other.yaml")
        let events = folder.nextEventsFile()
        let first = try JobGraphBinary.start(["run", "p.yaml", "--progress", "plain", "--events", events], in: folder.directory)
        #expect(await first.waitForTransitions(to: "executing", in: events))
        let other = try await JobGraphBinary.run(["run", "other.yaml", "--progress", "plain"], in: folder.directory)
        #expect(other.status == 0, "\(other.standardError)")
        #expect(folder.directory.read("other.txt") == "other\n")
        try folder.write("", to: "release")
        #expect(try await first.finish().status == 0)
        // Each pipeline's runs under its own name, neither closed by the other.
        for name in ["p.yaml", "other.yaml"] {
            let runs = try await JobGraphBinary.run(["history", name, "--json"], in: folder.directory)
            let report = try #require(try JSONSerialization.jsonObject(with: Data(runs.standardOutput.utf8)) as? [String: Any])
            #expect((report["runs"] as? [[String: Any]])?.compactMap { $0["outcome"] as? String } == ["succeeded"], "\(runs.standardOutput)")
        }
    }

    /// Bug 7 of issue 35: a task that calls jobgraph on its own pipeline, as recursive make does.
    @Test func aTaskThatRunsJobgraphOnItsOwnPipelineRunsUnderItsLock() async throws {
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              outer: {run: "\\"$JOBGRAPH\\" run p.yaml inner --progress plain && echo outer >> runs.txt"}
              inner: {run: "echo inner >> runs.txt; touch inner.out", outputs: [inner.out]}
              other: {run: "true"}
            """)
        defer { folder.remove() }
        var environment = JobGraphBinary.environment
        environment["JOBGRAPH"] = try JobGraphBinary.location().path
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "outer", "--progress", "plain"], in: folder.directory,
                                                   environment: environment)
        #expect(outcome.status == 0, "\(outcome.standardOutput)\n\(outcome.standardError)")
        #expect(folder.directory.read("runs.txt") == "inner\nouter\n")
        #expect(await folder.integrityCheck() == "ok")
        // Both runs in the history, each with its own outcome: the nested one did not close the outer one.
        let runs = try await folder.history(["--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(runs.standardOutput.utf8)) as? [String: Any])
        #expect((report["runs"] as? [[String: Any]])?.compactMap { $0["outcome"] as? String } == ["succeeded", "succeeded"],
                "\(runs.standardOutput)")
        #expect((report["runs"] as? [[String: Any]])?.map { $0["nested_in"] as? Int } == [1, nil], "\(runs.standardOutput)")
        let text = try await folder.history()
        #expect(text.outputLines.contains { $0.hasPrefix("  #2 ") && $0.hasSuffix("1 succeeded, nested in #1") }, "\(text.outputLines)")
        // What the nested run recorded counts: `inner` is up to date now.
        let again = try await JobGraphBinary.run(["run", "p.yaml", "inner", "--progress", "plain"], in: folder.directory)
        #expect(again.status == 0)
        #expect(folder.directory.read("runs.txt") == "inner\nouter\n")
    }

    @Test func theLockVariableAloneDoesNotLetAnUnrelatedRunIn() async throws {
        let folder = try PipelineFolder(Self.pipeline)
        defer { folder.remove() }
        let events = folder.nextEventsFile()
        let first = try JobGraphBinary.start(["run", "p.yaml", "--progress", "plain", "--events", events], in: folder.directory)
        #expect(await first.waitForTransitions(to: "executing", in: events))
        // The variable names the held lock, but its holder is no ancestor of this run.
        var environment = JobGraphBinary.environment
        environment["JOBGRAPH_RUN_LOCK"] = URL(fileURLWithPath: folder.directory.file(".jobgraph/p.yaml.lock")).standardizedFileURL.path
        let refused = try await JobGraphBinary.run(["run", "p.yaml", "--progress", "plain"], in: folder.directory, environment: environment)
        #expect(refused.status == 2)
        #expect(refused.standardError.contains("pid \(first.pid)"), "\(refused.standardError)")
        try folder.write("", to: "release")
        #expect(try await first.finish().status == 0)
    }
}
