import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 34: a `jobgraph` killed with SIGKILL cannot stop its tasks itself; its session watchdog does, so
/// that nothing of the run goes on running beside the next one (docs/state.md, "A killed run").
@Suite(.hangLimit(minutes: 2))
struct KilledRunTests {
    @Test func everyProcessOfTheTasksDiesWithAKilledJobgraph() async throws {
        // In `family`'s process group, a sleep; out of it, a detached (`setsid`) grandchild. `stubborn`
        // ignores SIGTERM, which its sleep inherits: only the watchdog's SIGKILL stops them.
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              family: {run: "setsid sh -c 'exec sleep 300.661' </dev/null >/dev/null 2>&1 & sleep 300.662 & wait"}
              stubborn: {run: "trap '' TERM; sleep 300.663 & wait"}
            """, prefix: "jobgraph-killed")
        defer { folder.remove() }
        let arguments = ["300.661", "300.662", "300.663"]
        let killed = try JobGraphBinary.start(["run", "p.yaml", "--jobs", "2", "--progress", "plain"], in: folder.directory)
        #expect(await eventually { arguments.allSatisfy { !ProcessTable.living(withArgument: $0).isEmpty } })
        killed.send(SIGKILL)
        let outcome = try await killed.finish()
        #expect(outcome.status == 128 + SIGKILL)
        let gone = await eventually { arguments.allSatisfy { ProcessTable.living(withArgument: $0).isEmpty } }
        #expect(gone, "a task's process outlived the killed jobgraph")
        // The watchdog itself (its last argument is jobgraph's pid) ends once it has stopped them.
        #expect(await eventually { ProcessTable.living(withArgument: String(killed.pid)).isEmpty })
        for argument in arguments { for pid in ProcessTable.living(withArgument: argument) { kill(pid, SIGKILL) } }

        // The next run names the dead one and what its watchdog stopped: both tasks' shells and sleeps.
        try folder.rewrite("""
            version: 1
            tasks:
              quick: {run: "true"}
            """)
        let next = try await folder.run()
        #expect(next.status == 0, "\(next.outcome.standardError)")
        let note = try #require(next.outcome.errorLines.first { $0.contains("died without ending") }, "\(next.outcome.errorLines)")
        #expect(note.hasPrefix("warning: the previous run (pid \(killed.pid)) died without ending; its watchdog stopped 5 processes: "), "\(note)")
        #expect(note.contains("sh (task `family`)") && note.contains("sleep (task `family`)") && note.contains("sleep (task `stubborn`)"), "\(note)")
        // Said once: the run after that one ended as usual.
        let third = try await folder.run()
        #expect(!third.outcome.errorLines.contains { $0.contains("died without ending") }, "\(third.outcome.errorLines)")
    }

    @Test func aRunThatEndsLeavesNoWatchdog() async throws {
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              quick: {run: "true"}
            """, prefix: "jobgraph-killed")
        defer { folder.remove() }
        let running = try JobGraphBinary.start(["run", "p.yaml", "--progress", "plain"], in: folder.directory)
        let pid = running.pid
        let outcome = try await running.finish()
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(ProcessTable.living(withArgument: String(pid)).isEmpty, "the watchdog outlived a run that ended")
    }
}
