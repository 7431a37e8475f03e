import Foundation
import JobGraphBasics
import JobGraphTestSupport
import PipelineModel
import TaskGraph
import Testing
@testable import Execution

private let here = SourceLocation(file: "p.yaml", line: 1, column: 1)

private func task(_ id: String, needs: [String] = [], queue: String? = nil, priority: Priority = .normal,
                  when: RunWhen = .success, retries: Int = 0, allowFailure: Bool = false) -> TaskSpec {
    TaskSpec(id: TaskID(id), location: here, action: .run([Template(literal: "true", location: here)]),
             needs: needs.map { Located(TaskID($0), at: here) }, queue: queue.map { Located(QueueName($0), at: here) },
             priority: priority, retries: retries, retryDelay: 0.001, when: when, allowFailure: allowFailure)
}

private func makeRunner(_ tasks: [TaskSpec], queues: [QueueSpec] = [], jobs: Int = 2, keepGoing: Bool = false,
                        executor: FakeExecutor) throws -> Runner {
    var diagnostics = Diagnostics()
    let graph = try #require(TaskGraph.build(Pipeline(file: "p.yaml", queues: queues, tasks: tasks), diagnostics: &diagnostics))
    let configuration = RunConfiguration(jobs: jobs, keepGoing: keepGoing, pipelineDirectory: "/tmp",
                                         stateDirectory: "/tmp/.jobgraph-tests", environment: [:], processorCount: 2)
    return Runner(graph: graph, configuration: configuration, executor: executor)
}

@Suite struct RunnerTests {
    @Test func everyTaskRunsAfterItsNeedsAndTheEventsTellTheWholeStory() async throws {
        let executor = FakeExecutor()
        let runner = try makeRunner([task("a"), task("b", needs: ["a"]), task("c", needs: ["a"]), task("d", needs: ["b", "c"])], executor: executor)
        let observer = RecordingObserver()
        let summary = await runner.run(observedBy: observer)
        let started = executor.recorded.started
        #expect(started.first == "a" && started.last == "d")
        #expect(summary.counts[.succeeded] == 4)
        #expect(!summary.hasFailures)
        #expect(summary.criticalPath.first == "a" && summary.criticalPath.last == "d")
        for id: TaskID in ["a", "b", "c", "d"] {
            let lines = observer.transitionLines.filter { $0.hasPrefix("\(id):") }
            #expect(lines == ["\(id): pending -> ready", "\(id): ready -> executing", "\(id): executing -> succeeded"])
        }
        // No task leaves `pending` before all its needs succeeded.
        let order = observer.transitionLines
        let dReady = try #require(order.firstIndex(of: "d: pending -> ready"))
        #expect(order.firstIndex(of: "b: executing -> succeeded")! < dReady)
        #expect(order.firstIndex(of: "c: executing -> succeeded")! < dReady)
    }

    @Test func jobsAndQueueLimitsHoldAndAreReached() async throws {
        let executor = FakeExecutor(delay: 0.02)
        let tasks = (0..<8).map { task("net\($0)", queue: "network") } + (0..<8).map { task("cpu\($0)") }
        let runner = try makeRunner(tasks, queues: [QueueSpec(name: QueueName("network"), maxConcurrent: 1, location: here)],
                                    jobs: 3, executor: executor)
        let observer = RecordingObserver()
        _ = await runner.run(observedBy: observer)
        var executing: [String: Int] = [:]
        var maximum: [String: Int] = [:]
        var total = 0, maximumTotal = 0
        for transition in observer.transitions {
            if transition.to == .executing { executing[transition.queue, default: 0] += 1; total += 1 }
            if transition.from == .executing { executing[transition.queue, default: 0] -= 1; total -= 1 }
            maximum[transition.queue] = max(maximum[transition.queue] ?? 0, executing[transition.queue] ?? 0)
            maximumTotal = max(maximumTotal, total)
        }
        #expect(maximum["network"] == 1)
        #expect(maximumTotal == 3)
    }

    @Test func aFailureSkipsDependentsAndCancelsTheRestButAlwaysTasksRun() async throws {
        let executor = FakeExecutor { work in work.id == "build" ? .failed(exitCode: 2, reason: "exit 2") : .succeeded }
        let runner = try makeRunner([
            task("build"), task("test", needs: ["build"]), task("notify", needs: ["build"], when: .failure),
            task("cleanup", needs: ["test"], when: .always), task("later", needs: ["notify"]),
        ], jobs: 1, executor: executor)
        let observer = RecordingObserver()
        let summary = await runner.run(observedBy: observer)
        #expect(observer.finalState(of: "build") == .failed)
        #expect(observer.finalState(of: "test") == .skipped)
        #expect(observer.finalState(of: "notify") == .succeeded)
        #expect(observer.finalState(of: "cleanup") == .succeeded)
        #expect(observer.finalState(of: "later") == .cancelled)
        #expect(summary.hasFailures)
        #expect(summary.failures.first?.exitCode == 2)
        let failed = try #require(observer.transitions.first { $0.to == .failed })
        #expect(failed.exitCode == 2)
        #expect(failed.duration != nil)
    }

    @Test func retriesGoBackToExecutingWithTheNextAttempt() async throws {
        let executor = FakeExecutor { work in work.attempt < 3 ? .failed(exitCode: 1, reason: "exit 1") : .succeeded }
        let runner = try makeRunner([task("flaky", retries: 2)], executor: executor)
        let observer = RecordingObserver()
        let summary = await runner.run(observedBy: observer)
        #expect(observer.transitionLines == [
            "flaky: pending -> ready", "flaky: ready -> executing", "flaky: executing -> failed", "flaky: failed -> executing",
            "flaky: executing -> failed", "flaky: failed -> executing", "flaky: executing -> succeeded",
        ])
        #expect(observer.transitions.map(\.attempt) == [1, 1, 1, 2, 2, 3, 3])
        #expect(!summary.hasFailures)
    }

    @Test func retryOnRetriesTheCausesItListsAndEndsTheOthersAtOnceSayingWhy() async throws {
        // Attempt 1 times out, attempt 2 is OOM-killed, attempt 3 exits 3, which `retry_on` does not list.
        let executor = FakeExecutor { work in
            switch work.attempt {
            case 1: .failed(exitCode: nil, reason: "timed out after 1s", cause: .timeout)
            case 2: .failed(exitCode: nil, reason: "was killed by SIGKILL (out of memory)", cause: .oom)
            default: .failed(exitCode: 3, reason: "exited with code 3")
            }
        }
        var flaky = task("flaky", retries: 5)
        flaky.retryOn = [.cause(.timeout), .cause(.oom), .exitCode(75)]
        let runner = try makeRunner([flaky], executor: executor)
        let observer = RecordingObserver()
        let summary = await runner.run(observedBy: observer)
        #expect(observer.transitions.filter { $0.to == .failed }.map(\.error) == [
            "timed out after 1s; retrying", "was killed by SIGKILL (out of memory); retrying",
            "exited with code 3; not retried: retry_on [timeout, oom, 75] does not list exit code 3",
        ])
        #expect(executor.recorded.started.count == 3)
        #expect(summary.failures.first?.reason == "exited with code 3; not retried: retry_on [timeout, oom, 75] does not list exit code 3")
    }

    @Test func interruptCancelsWhatWaitsTerminatesWhatRunsAndStillRunsAlwaysTasks() async throws {
        let executor = FakeExecutor(hanging: ["long"])
        let runner = try makeRunner([task("long"), task("after", needs: ["long"]), task("cleanup", needs: ["long"], when: .always)],
                                    jobs: 1, executor: executor)
        let observer = RecordingObserver()
        async let summary = runner.run()
        for await event in runner.events {
            observer.observe(event)
            if case .transition(let transition) = event, transition.to == .executing, transition.task == "long" {
                runner.control(.interrupt)
            }
        }
        let result = await summary
        #expect(result.stop == .interrupt)
        #expect(observer.finalState(of: "long") == .cancelled)
        #expect(observer.finalState(of: "after") == .cancelled)
        #expect(observer.finalState(of: "cleanup") == .succeeded)
        #expect(executor.recorded.terminated == ["long"])
    }

    @Test func suspendHoldsNewStartsAndResumeReleasesThem() async throws {
        let executor = FakeExecutor()
        let runner = try makeRunner([task("first"), task("second", needs: ["first"])], jobs: 1, executor: executor)
        let observer = RecordingObserver()
        runner.control(.suspend)
        async let summary = runner.run()
        var startedWhileSuspended: [TaskID]?
        for await event in runner.events {
            observer.observe(event)
            if case .transition(let transition) = event, transition.task == "first", transition.to == .ready {
                // Ready but held: nothing may start until resumed.
                startedWhileSuspended = executor.recorded.started
                runner.control(.resume)
            }
        }
        _ = await summary
        #expect(startedWhileSuspended == [])
        // A start is announced under the lock that orders it: one made while suspended, even after the
        // look above, would come before the resumption in the stream.
        let resumed = observer.events.firstIndex { if case .suspended(false) = $0 { true } else { false } }
        let firstStarted = observer.events.firstIndex {
            if case .transition(let transition) = $0 { transition.task == "first" && transition.to == .executing } else { false }
        }
        #expect(resumed != nil && firstStarted != nil && resumed! < firstStarted!, "\(observer.events)")
        #expect(executor.recorded.started == ["first", "second"])
    }
}
