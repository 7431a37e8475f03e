import Foundation
import JobGraphBasics
import JobGraphTestSupport
import PipelineModel
import TaskGraph
import Testing
@testable import Execution

/// The Runner drives the run's life on its executor: `prepare` before the first start, `cancel` when a
/// signal stops the run (before any attempt is stopped), `finish` after the last end.
@Suite struct RunnerExecutorTests {
    /// Records, in order, what the Runner asked of it; attempts run on a `FakeExecutor`.
    final class LifecycleExecutor: TaskExecutor {
        let calls = Locked<[String]>([])
        let attempts: FakeExecutor
        let setupError: String?

        init(attempts: FakeExecutor = FakeExecutor(), setupError: String? = nil) {
            self.attempts = attempts
            self.setupError = setupError
        }

        struct SetupError: Error, CustomStringConvertible { var description: String }

        func prepare() throws -> [String] {
            calls.withLock { $0.append("prepare") }
            if let setupError { throw SetupError(description: setupError) }
            return ["set up"]
        }

        func start(_ work: TaskWork, reporter: TaskReporter) throws -> any TaskExecution {
            calls.withLock { $0.append("start \(work.id)") }
            var reporter = reporter
            let calls = self.calls, id = work.id, finished = reporter.finished
            reporter.finished = { result in
                calls.withLock { $0.append("end \(id)") }
                finished(result)
            }
            reporter.executorJob("job-\(work.id)")
            return try attempts.start(work, reporter: reporter)
        }

        func cancel() { calls.withLock { $0.append("cancel") } }

        func finish() -> [String] {
            calls.withLock { $0.append("finish") }
            return ["released"]
        }
    }

    static func runner(_ yaml: String, executor: LifecycleExecutor, messages: Locked<[String]>) throws -> Runner {
        var diagnostics = Diagnostics()
        let graph = try #require(PipelineCheck.graph(yaml: yaml, file: "p.yaml", diagnostics: &diagnostics), "\(diagnostics.all)")
        let configuration = RunConfiguration(jobs: 2, pipelineDirectory: "/tmp", stateDirectory: "/tmp/.jobgraph-tests",
                                             environment: [:], processorCount: 2)
        return Runner(graph: graph, configuration: configuration, executor: executor,
                      executorMessages: { lines in messages.withLock { $0 += lines } })
    }

    @Test func theExecutorIsSetUpBeforeTheFirstStartAndReleasedAfterTheLastEnd() async throws {
        let executor = LifecycleExecutor()
        let messages = Locked<[String]>([])
        let runner = try Self.runner("version: 1\ntasks:\n  a: {run: \"true\"}\n  b: {needs: [a], run: \"true\"}\n",
                                     executor: executor, messages: messages)
        let observer = RecordingObserver()
        let summary = await runner.run(observedBy: observer)
        #expect(executor.calls.withLock { $0 } == ["prepare", "start a", "end a", "start b", "end b", "finish"])
        #expect(messages.withLock { $0 } == ["set up"])
        #expect(summary.executorNotes == ["released"])
        guard case .finished(let finished)? = observer.events.last else { Issue.record("no run-finished event"); return }
        #expect(finished.executorNotes == ["released"])
        // The executor's job reaches the attempt's end, where the events name it as `slurm_job`.
        #expect(observer.transitions.last { $0.task.rawValue == "b" }?.executorJob == "job-b")
    }

    @Test func anExecutorThatCannotBeSetUpFailsEachAttemptWithItsWords() async throws {
        let executor = LifecycleExecutor(setupError: "no cluster today")
        let messages = Locked<[String]>([])
        let runner = try Self.runner("version: 1\ntasks:\n  a: {run: \"true\"}\n", executor: executor, messages: messages)
        let observer = RecordingObserver()
        let summary = await runner.run(observedBy: observer)
        #expect(executor.calls.withLock { $0 } == ["prepare", "finish"])
        #expect(observer.transitions.last?.to == .failed)
        #expect(observer.transitions.last?.error == "no cluster today")
        #expect(summary.failures.map(\.reason) == ["no cluster today"])
        #expect(messages.withLock { $0 }.isEmpty)
    }

    @Test func aStopCancelsOnTheExecutorBeforeAnyAttemptIsStopped() async throws {
        let executor = LifecycleExecutor(attempts: FakeExecutor(hanging: [TaskID("long")]))
        let messages = Locked<[String]>([])
        let runner = try Self.runner("version: 1\ntasks:\n  long: {run: \"sleep 300\"}\n", executor: executor, messages: messages)
        async let summary = runner.run()
        for await event in runner.events {
            if case .transition(let transition) = event, transition.to == .executing {
                // Stopped once the attempt has reached the executor, so that there is one to stop.
                #expect(await eventually { executor.calls.withLock { $0.contains("start long") } })
                runner.control(.interrupt)
            }
        }
        #expect(await summary.stop == .interrupt)
        #expect(executor.calls.withLock { $0 } == ["prepare", "start long", "cancel", "end long", "finish"])
        #expect(executor.attempts.recorded.terminated == [TaskID("long")])
    }
}
