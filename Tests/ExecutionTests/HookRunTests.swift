import Execution
import Foundation
import JobGraphTestSupport
import PipelineModel
import Testing

/// Completion hooks with real processes (contract: `on_success`, `on_failure`; Advanced NSOperations'
/// observers): a task's hook runs once its outcome is known, after its last attempt, before its dependents
/// go on; the pipeline's hook runs after every task; a failing hook is reported and fails the run, while
/// the task keeps the state it earned.
@Suite(.hangLimit(minutes: 1))
struct HookRunTests {
    /// Index in `observer.events` of the first output line `line` of `task`.
    private static func outputIndex(_ run: RealRun, _ task: TaskID, _ line: String) -> Int? {
        run.eventIndex { if case .output(task, line) = $0 { true } else { false } }
    }

    /// Index in `observer.events` of the first transition of `task` to `state`.
    private static func transitionIndex(_ run: RealRun, _ task: TaskID, to state: TaskState) -> Int? {
        run.eventIndex { if case .transition(let transition) = $0 { transition.task == task && transition.to == state } else { false } }
    }

    @Test func aTaskHookRunsAfterItsWorkAndBeforeItsDependents() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              build:
                run: echo building; echo artifact > artifact.txt
                on_success: echo hook sees $(cat artifact.txt)
                on_failure: echo wrong hook
              ship: {needs: [build], run: "echo shipping"}
            """, jobs: 2)
        #expect(run.finalStates == ["build": .succeeded, "ship": .succeeded])
        #expect(run.output(of: "build") == ["building", "hook sees artifact"])
        #expect(run.directory.read(".jobgraph/logs/build.log") == "building\nhook sees artifact\n")
        let hook = try #require(Self.outputIndex(run, "build", "hook sees artifact"))
        let shipStarts = try #require(Self.transitionIndex(run, "ship", to: .executing))
        #expect(hook < shipStarts)
        #expect(run.summary?.hasFailures == false)
    }

    @Test func onFailureRunsOnceAfterTheLastAttempt() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              flaky:
                retries: 1
                retry_delay: 10ms
                run: echo attempt; exit 4
                on_failure: echo giving up
                on_success: echo wrong hook
              rescue: {needs: [flaky], when: failure, run: "echo rescuing"}
            """, jobs: 1)
        #expect(run.output(of: "flaky") == ["attempt", "attempt", "giving up"])
        let retried = try #require(run.eventIndex {
            if case .transition(let transition) = $0 { transition.task == "flaky" && transition.from == .failed } else { false }
        })
        #expect(try #require(Self.outputIndex(run, "flaky", "giving up")) > retried)
        #expect(run.finalStates == ["flaky": .failed, "rescue": .succeeded])
    }

    @Test func aFailingHookFailsTheRunWhileTheTaskStaysSucceeded() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              build: {run: "echo built", on_success: "echo notifying; exit 7"}
              ship: {needs: [build], run: "echo shipping"}
            """, jobs: 1)
        #expect(run.finalStates == ["build": .succeeded, "ship": .succeeded])
        #expect(run.output(of: "build") == ["built", "notifying"])
        #expect(run.summary?.hasFailures == true)
        let failure = try #require(run.summary?.failures.first)
        #expect(failure.id == "build" && failure.reason == "its completion hook `echo notifying; exit 7` failed" && !failure.allowed)
    }

    @Test(arguments: [true, false])
    func thePipelineHookRunsAfterEveryTaskAndMatchesTheOutcome(taskFails: Bool) async throws {
        let run = try await RealRun.run("""
            version: 1
            vars:
              who: the team
            tasks:
              first: {run: "touch first.done"}
              second: {needs: [first], run: "\(taskFails ? "exit 1" : "true")"}
            on_success: echo telling {{ who }} it worked; test -e first.done
            on_failure: echo telling {{ who }} it failed
            """, jobs: 1)
        let hook: TaskID = taskFails ? "on_failure" : "on_success"
        #expect(run.output(of: hook) == ["telling the team it \(taskFails ? "failed" : "worked")"])
        #expect(run.output(of: taskFails ? "on_success" : "on_failure").isEmpty)
        let lastTransition = try #require(run.observer.events.lastIndex { if case .transition = $0 { true } else { false } })
        #expect(try #require(Self.outputIndex(run, hook, "telling the team it \(taskFails ? "failed" : "worked")")) > lastTransition)
        #expect(run.summary?.hasFailures == taskFails)
    }

    @Test func aFailingPipelineHookFailsTheRun() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              only: {run: "true"}
            on_success: echo publishing; exit 3
            """, jobs: 1)
        #expect(run.finalStates == ["only": .succeeded])
        #expect(run.output(of: "on_success") == ["publishing"])
        #expect(run.summary?.hasFailures == true)
        #expect(run.summary?.failures.map(\.reason) == ["the pipeline's hook `echo publishing; exit 3` failed"])
    }
}
