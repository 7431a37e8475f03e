import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-Z and `fg` (contract: "Exit codes and signals"): SIGTSTP to `jobgraph` stops every process of the
/// running tasks and then `jobgraph` itself, as a shell's job control would; SIGCONT continues them all.
/// The test sends the signals a shell would and reads each process's state in `/proc/<pid>/stat`.
@Suite(.hangLimit(minutes: 1))
struct JobControlTests {
    @Test func ctrlZStopsTheTasksWithJobgraphAndFgContinuesThem() async throws {
        let directory = try ScratchDirectory("jobgraph-job-control")
        defer { directory.remove() }
        // Two tasks, one with a child of its own, each polling for a file: a stopped one cannot see it.
        try directory.write("""
            version: 1
            tasks:
              loop: {run: "echo $$ > loop.pid; until [ -e go ]; do sleep 0.01; done; echo finished"}
              family: {run: "echo $$ > family.pid; sh -c 'until [ -e go ]; do sleep 0.01; done' & wait; echo finished"}
            """, to: "p.yaml")
        let running = try JobGraphBinary.start(["run", "p.yaml", "--jobs", "2", "--events", "events.jsonl"], in: directory)
        // The shell makes each file before it writes the pid in it: a read in between finds it empty.
        let pid = { (task: String) in pid_t((directory.read("\(task).pid") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(await eventually { pid("loop") != nil && pid("family") != nil })
        let groups = try ["loop", "family"].map { task in try #require(pid(task)) }
        #expect(await eventually { ProcessTable.states(inGroup: groups[1]).count >= 2 })

        running.send(SIGTSTP)
        // Every process of both tasks' groups is stopped, and so is jobgraph.
        #expect(await eventually {
            ProcessTable.state(of: running.pid) == "T" && groups.allSatisfy(ProcessTable.isStopped(group:))
        }, "jobgraph \(ProcessTable.state(of: running.pid).map(String.init) ?? "gone"), tasks \(groups.map { ProcessTable.states(inGroup: $0) })")
        try directory.write("", to: "go")
        #expect(groups.allSatisfy { !ProcessTable.states(inGroup: $0).isEmpty }, "a stopped task went on and ended")

        running.send(SIGCONT)
        #expect(await eventually { ProcessTable.state(of: running.pid) != "T" })
        let outcome = try await running.finish()
        #expect(outcome.status == 0)
        #expect(outcome.outputLines.contains("loop | finished"))
        #expect(outcome.outputLines.contains("family | finished"))
    }
}
