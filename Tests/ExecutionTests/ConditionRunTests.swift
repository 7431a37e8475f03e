import Execution
import Foundation
import JobGraphTestSupport
import PipelineModel
import Testing

/// `conditions:` with real processes (contract: "conditions"; Advanced NSOperations' conditions): checked
/// once a task's needs are done, while it shows `waiting`; unmet means `skipped`, and its dependents follow
/// the `when` rules; a skip by a condition is no failure.
@Suite(.hangLimit(minutes: 1))
struct ConditionRunTests {
    @Test func unmetConditionsSkipTheTaskAndItsSuccessDependentsAndMetOnesLetItRun() async throws {
        let run = try await RealRun.run("""
            version: 1
            env:
              PRESENT: "yes"
            tasks:
              make-marker: {run: "touch marker"}
              has-file: {needs: [make-marker], conditions: [{file_exists: marker}], run: "echo has-file ran"}
              command-passes: {needs: [make-marker], conditions: [{command: "test -e marker"}], run: "echo command-passes ran"}
              has-env: {conditions: [{env: PRESENT}], run: "echo has-env ran"}
              no-file: {conditions: [{file_exists: missing.txt}], run: "touch no-file.ran"}
              after-no-file: {needs: [no-file], run: "touch after-no-file.ran"}
              cleanup-after-no-file: {needs: [no-file], when: always, run: "echo cleaning"}
              no-env: {conditions: [{env: ABSENT_VARIABLE}], run: "touch no-env.ran"}
              after-no-env: {needs: [no-env], run: "touch after-no-env.ran"}
              command-fails: {conditions: [{command: "echo checking the database; exit 1"}], run: "touch command-fails.ran"}
              after-command: {needs: [command-fails], run: "touch after-command.ran"}
            """, jobs: 3)
        #expect(run.finalStates == [
            "make-marker": .succeeded, "has-file": .succeeded, "command-passes": .succeeded, "has-env": .succeeded,
            "no-file": .skipped, "after-no-file": .skipped, "cleanup-after-no-file": .succeeded,
            "no-env": .skipped, "after-no-env": .skipped, "command-fails": .skipped, "after-command": .skipped,
        ])
        // Checked after the needs ended, while `waiting`: `marker` did not exist when the run began.
        #expect(run.moves(of: "has-file") == [
            "pending -> waiting", "waiting -> ready", "ready -> executing", "executing -> succeeded",
        ])
        let markerMade = try #require(run.terminalIndex(of: "make-marker"))
        let hasFileWaits = try #require(run.index(of: "has-file", from: .pending, to: .waiting))
        #expect(markerMade < hasFileWaits)
        #expect(run.moves(of: "no-file") == ["pending -> waiting", "waiting -> skipped"])
        #expect(run.transition(of: "no-file", to: .skipped)?.error == "condition not met: file missing.txt exists")
        #expect(run.transition(of: "no-env", to: .skipped)?.error == "condition not met: $ABSENT_VARIABLE is set")
        #expect(run.output(of: "cleanup-after-no-file") == ["cleaning"])
        for name in ["no-file", "after-no-file", "no-env", "after-no-env", "command-fails", "after-command"] {
            #expect(!run.directory.exists("\(name).ran"), "\(name) ran")
        }
        // A failing `command` condition's output is the task's output and goes to its log.
        #expect(run.output(of: "command-fails") == ["checking the database"])
        #expect(run.directory.read(".jobgraph/logs/command-fails.log") == "checking the database\n")
        #expect(run.summary?.hasFailures == false)
        #expect(run.brokenLifecycles.isEmpty, "\(run.brokenLifecycles)")
    }

    @Test func conditionsAreCheckedInOrderUpToTheFirstUnmetOne() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              gated:
                conditions: [{command: "touch first.checked"}, {env: ABSENT_VARIABLE}, {command: "touch third.checked"}]
                run: "touch gated.ran"
            """, jobs: 1)
        #expect(run.finalStates == ["gated": .skipped])
        #expect(run.directory.exists("first.checked"))
        #expect(!run.directory.exists("third.checked"))
    }

    @Test func reachableSeesAListeningSocketComeUp() async throws {
        // Bound but not listening: a connection is refused until the test calls `listen()`, once the task
        // shows `waiting` and a while after, so the first tries fail and a later one succeeds.
        let socket = try LoopbackSocket()
        let run = try await RealRun.run("""
            version: 1
            tasks:
              client: {conditions: [{reachable: "127.0.0.1:\(socket.port)"}], run: "echo connected"}
            """, jobs: 1, configure: { $0.reachablePatience = 30 }, react: { event, _, _ in
            if case .transition(let transition) = event, transition.to == .waiting {
                try await Task.sleep(for: .milliseconds(300))
                try socket.listen()
            }
        })
        #expect(run.finalStates == ["client": .succeeded])
        let waiting = try #require(run.transition(of: "client", to: .waiting))
        let ready = try #require(run.transition(of: "client", to: .ready))
        #expect(ready.elapsed - waiting.elapsed >= 0.3)
    }

    @Test func reachableGivesUpAfterItsPatienceAndSkipsTheTask() async throws {
        let socket = try LoopbackSocket()
        let run = try await RealRun.run("""
            version: 1
            tasks:
              client: {conditions: [{reachable: "127.0.0.1:\(socket.port)"}], run: "touch client.ran"}
              after: {needs: [client], run: "touch after.ran"}
            """, jobs: 1, configure: { $0.reachablePatience = 0.3 })
        #expect(run.finalStates == ["client": .skipped, "after": .skipped])
        let waiting = try #require(run.transition(of: "client", to: .waiting))
        let skipped = try #require(run.transition(of: "client", to: .skipped))
        #expect(skipped.error == "condition not met: 127.0.0.1:\(socket.port) is reachable")
        #expect(skipped.elapsed - waiting.elapsed >= 0.3)
        #expect(!run.directory.exists("client.ran"))
        #expect(run.summary?.hasFailures == false)
    }
}
