import Execution
import Foundation
import JobGraphBasics
import JobGraphSystem
import JobGraphTestSupport
import PipelineModel
import PipelineRun
import StateStore
import Steps
import TaskGraph
import Testing

/// A run as a library call, with no command line: a real pipeline file, real child processes, a real
/// state store, and an observer that hears the run.
@Suite(.hangLimit(minutes: 2))
struct PipelineRunTests {
    /// Keeps what the run's observers hear. `@unchecked Sendable`: only the observers' thread calls it,
    /// and the test reads it once `PipelineRun.run` has returned, after the observers were closed.
    final class Witness: RunObserver, @unchecked Sendable {
        var events: [RunEvent] = []
        var isClosed = false

        func observe(_ event: RunEvent) { events.append(event) }
        func close() { isClosed = true }

        var transitions: [TaskTransition] {
            events.compactMap { if case .transition(let transition) = $0 { transition } else { nil } }
        }

        func states(of task: TaskID) -> [TaskState] { transitions.filter { $0.task == task }.map(\.to) }

        func output(of task: TaskID) -> [String] {
            events.compactMap { if case .output(task, let line) = $0 { line } else { nil } }
        }
    }

    /// Loads `file` as `jobgraph run` would, and runs every task of it once through the library call.
    func run(_ file: String, in folder: ScratchDirectory) async throws -> (summary: RunSummary, witness: Witness) {
        var diagnostics = Diagnostics()
        let graph = try #require(PipelineCheck.graph(contentsOf: file, variableOverrides: [:], diagnostics: &diagnostics), "\(diagnostics.all)")
        #expect(!diagnostics.hasErrors, "\(diagnostics.all)")
        let configuration = runConfiguration(pipelineDirectory: folder.path, jobs: 2, environment: ProcessInfo.processInfo.environment,
                                             processorCount: 2)
        let loop = try EventLoop()
        defer { loop.stop() }
        let witness = Witness()
        let summary = try await PipelineRun.run(graph, configuration: configuration,
                                                executor: LocalExecutor(loop: loop, logDirectory: configuration.logDirectory),
                                                history: try StateStore.open(directory: folder.path), observers: [witness])
        return (summary, witness)
    }

    @Test func theHelloExampleRunsThroughTheLibraryCallAndItsObserverHearsEveryTask() async throws {
        let folder = try ScratchDirectory()
        defer { folder.remove() }
        let file = folder.file("hello.yaml")
        try FileManager.default.copyItem(atPath: Fixtures.repositoryRoot.appendingPathComponent("examples/hello.yaml").path, toPath: file)

        let (summary, witness) = try await run(file, in: folder)

        #expect(summary.counts[.succeeded] == 4)
        #expect(summary.failures.isEmpty)
        #expect(summary.stop == nil)
        #expect(witness.isClosed)
        guard case .started(let start)? = witness.events.first, case .finished(let finished)? = witness.events.last else {
            Issue.record("the events do not start with run-started and end with run-finished: \(witness.events)")
            return
        }
        #expect(start.taskCount == 4)
        #expect(finished.counts == summary.counts)
        for task in ["greet", "clock", "count", "report"] {
            #expect(witness.states(of: TaskID(task)).last == .succeeded, "\(task)")
        }
        #expect(witness.output(of: "greet") == ["Hello, world"])
        #expect(witness.output(of: "count") == ["one", "two", "three"])
        #expect(witness.output(of: "report") == ["greeting=Hello VERBOSE=off"])
        // `report` needs the other three: it executes only once each has succeeded.
        let transitions = witness.transitions
        let reportStarts = try #require(transitions.firstIndex { $0.task == "report" && $0.to == .executing })
        for task: TaskID in ["greet", "clock", "count"] {
            let succeeded = try #require(transitions.firstIndex { $0.task == task && $0.to == .succeeded })
            #expect(succeeded < reportStarts, "\(task)")
        }
    }

    @Test func theHistoryGivenToTheCallFindsTheSecondRunUpToDate() async throws {
        let folder = try ScratchDirectory()
        defer { folder.remove() }
        try folder.write("""
            version: 1
            tasks:
              make:
                run: echo made > made.txt
                outputs: [made.txt]
              copy:
                needs: make
                run: cp made.txt copy.txt
                inputs: [made.txt]
                outputs: [copy.txt]
            """, to: "jobgraph.yaml")

        let first = try await run(folder.file("jobgraph.yaml"), in: folder)
        #expect(first.summary.counts[.succeeded] == 2)
        #expect(folder.read("copy.txt") == "made\n")

        let second = try await run(folder.file("jobgraph.yaml"), in: folder)
        #expect(second.summary.counts[.upToDate] == 2)
        #expect(second.witness.states(of: "make").last == .upToDate)
        #expect(second.witness.states(of: "copy").last == .upToDate)
        // What `jobgraph report` shows of the latest run, read back through the library.
        let report = try #require(try RunTimeline.read(pipelineFile: folder.file("jobgraph.yaml"), in: folder.path, run: nil)).runReport
        #expect(report.outcome == "succeeded")
        #expect(report.counts.first { $0.state == "up-to-date" }?.count == 2)
    }
}
