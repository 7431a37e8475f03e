import Foundation
import Testing
import Execution
import PipelineModel

/// Attempts from transitions: one per stay in `executing`, each in the lowest lane free when it began.
@Suite struct TaskAttemptLogTests {
    private func transition(_ task: TaskID, _ from: TaskState, _ to: TaskState, at elapsed: Double, attempt: Int = 1,
                            exitCode: Int32? = nil, error: String? = nil) -> TaskTransition {
        TaskTransition(time: Date(timeIntervalSince1970: elapsed), elapsed: elapsed, task: task, from: from, to: to,
                       attempt: attempt, queue: "q", exitCode: exitCode, error: error)
    }

    @Test func eachAttemptKeepsWhatItsTransitionIntoExecutingSaysItHeld() {
        var log = TaskAttemptLog()
        var first = transition("a", .ready, .executing, at: 0)
        first.resources = Resources([.init(name: "cpus", value: 1), .init(name: "mem", value: 1 << 30)])
        var retry = transition("a", .failed, .executing, at: 1, attempt: 2)
        retry.resources = Resources([.init(name: "cpus", value: 1), .init(name: "mem", value: 2 << 30)])
        log.record(first)
        log.record(transition("a", .executing, .failed, at: 1, exitCode: 1))
        log.record(retry)
        log.record(transition("a", .executing, .succeeded, at: 2, exitCode: 0))
        log.record(transition("b", .ready, .executing, at: 2))
        #expect(Array(log.attempts).map(\.resources) == [first.resources, retry.resources, nil])
    }

    @Test func lanesAreReusedLowestFirstAndRetriesAreAttemptsOfTheirOwn() {
        var log = TaskAttemptLog(ignoring: ["fan"])
        log.record(transition("a", .ready, .executing, at: 0))
        log.record(transition("fan", .ready, .executing, at: 0))  // a fan-out: no lane
        log.record(transition("b", .ready, .executing, at: 1))
        log.record(transition("c", .ready, .executing, at: 2))
        log.record(transition("a", .executing, .succeeded, at: 3, exitCode: 0))
        log.record(transition("b", .executing, .failed, at: 4, exitCode: 1, error: "exit status 1; retrying"))
        log.record(transition("d", .ready, .executing, at: 5))           // lane 0, freed by a
        log.record(transition("b", .failed, .executing, at: 6, attempt: 2))  // lane 1, freed by its own first attempt
        log.record(transition("c", .executing, .cancelled, at: 7))
        log.record(transition("e", .pending, .upToDate, at: 7))          // never executes: no attempt
        log.record(transition("f", .ready, .executing, at: 7))
        log.record(transition("f", .executing, .upToDate, at: 7.5))      // only checked: no attempt either
        log.record(transition("g", .ready, .executing, at: 8))           // lane 2 again: f's check freed it
        log.attachLogTail(["oops"], to: "b")

        let attempts = Array(log.attempts)
        #expect(attempts.map(\.task) == ["a", "b", "c", "d", "b", "g"])
        #expect(attempts.map(\.slot) == [0, 1, 2, 0, 1, 2])
        #expect(attempts.map(\.attempt) == [1, 1, 1, 1, 2, 1])
        #expect(attempts.map(\.outcome) == [.succeeded, .failed, .cancelled, .executing, .executing, .executing])
        #expect(attempts.map(\.end) == [3, 4, 7, nil, nil, nil])
        #expect(attempts[1].error == "exit status 1; retrying")
        #expect(attempts[1].exitCode == 1)
        #expect(attempts[4].logTail == ["oops"])
        #expect(attempts[1].logTail.isEmpty)
    }

    /// `record(transitionsIn:)` passes over the pairs `isCheckOnly` picks; the attempts must come out the same.
    @Test func passingOverCheckOnlyPairsLeavesTheAttemptsAsTheyWere() {
        let transitions = [
            transition("a", .ready, .executing, at: 0),
            transition("b", .ready, .executing, at: 0), transition("b", .executing, .upToDate, at: 0.1),  // a check
            transition("c", .ready, .executing, at: 0.2), transition("a", .executing, .upToDate, at: 0.3),  // not a pair
            transition("d", .ready, .executing, at: 0.4), transition("d", .executing, .failed, at: 0.5, exitCode: 2),
            transition("d", .failed, .executing, at: 0.6, attempt: 2), transition("d", .executing, .upToDate, at: 0.7, attempt: 2),
            transition("e", .pending, .upToDate, at: 0.8),
            transition("c", .executing, .succeeded, at: 0.9, exitCode: 0),
            transition("f", .ready, .executing, at: 1),
        ]
        var everyOne = TaskAttemptLog()
        for transition in transitions { everyOne.record(transition) }
        var batched = TaskAttemptLog()
        // Other events in the batch are not the log's: they change nothing.
        batched.record(transitionsIn: [.suspended(true)] + transitions.map { .transition($0) } + [.suspended(false)])
        let checkOnly = zip(transitions, transitions.dropFirst()).filter { TaskAttemptLog.isCheckOnly($0, then: $1) }
        #expect(checkOnly.map(\.0.task) == ["b", "d"])
        #expect(Array(batched.attempts) == Array(everyOne.attempts))
        #expect(Array(everyOne.attempts).map(\.task) == ["c", "d", "f"])
        #expect(Array(everyOne.attempts).map(\.slot) == [1, 0, 0])
    }
}
