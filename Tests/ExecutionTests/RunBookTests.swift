import JobGraphBasics
import PipelineModel
import TaskGraph
import Testing
@testable import Execution

private let here = SourceLocation(file: "p.yaml", line: 1, column: 1)

private func graph(_ tasks: [(id: String, needs: [String], service: Bool)]) throws -> TaskGraph {
    let specs = tasks.map { task in
        var spec = TaskSpec(id: TaskID(task.id), location: here, action: .run([Template(literal: "true", location: here)]),
                            needs: task.needs.map { Located(TaskID($0), at: here) })
        if task.service { spec.service = ServiceSpec() }
        return spec
    }
    var diagnostics = Diagnostics()
    return try #require(TaskGraph.build(Pipeline(file: "p.yaml", tasks: specs), diagnostics: &diagnostics))
}

/// A book for `graph` with no task started yet.
private func book(_ graph: TaskGraph) -> RunBook {
    let layout = QueueLayout(graph: graph, jobs: 2, processorCount: 2)
    let plan = Plan(graph: graph, layout: layout, jobs: 2, keepGoing: false, durations: nil)
    let tasks = graph.nodes.map { RunTask(node: $0, graph: graph, queue: layout.queueOfTask[$0.index]) }
    return RunBook(plan: plan, tasks: tasks, graph: graph, isService: { tasks[$0].spec.service != nil })
}

/// Starts task `index`: its operation, as the Plan's start makes it.
@discardableResult
private func start(_ index: Int, in book: inout RunBook) -> TaskOperation {
    let operation = TaskOperation(index: index, task: book.tasks[index], answer: nil, setupFailure: nil,
                                  startedAt: .now, begin: { _ in })
    book.add(operation)
    operation.phase = .starting
    return operation
}

/// Operations are made when their task starts and let go once nothing needs them: a long run keeps its
/// frontier in memory, not its whole graph, with the `needs` as dependency edges.
@Suite struct RunBookTests {
    @Test func aTaskStartedAfterItsNeedsHasThemAsDependencies() throws {
        var book = book(try graph([("a", [], false), ("b", [], false), ("c", ["a", "b"], false)]))
        let a = start(0, in: &book)
        let b = start(1, in: &book)
        book.end(0)
        book.end(1)
        let c = start(2, in: &book)
        #expect(c.dependencies.count == 2 && c.dependencies.contains(a) && c.dependencies.contains(b))
    }

    @Test func foundationSeesTheOperationsPhase() throws {
        var book = book(try graph([("a", [], false)]))
        let a = start(0, in: &book)
        #expect(a.isExecuting && !a.isFinished)
        a.phase = .waitingToRetry
        #expect(a.isExecuting && !a.isFinished)
        book.end(0)
        #expect(!a.isExecuting && a.isFinished)
        #expect(book.operations[0] == nil, "nothing needs an ended task's operation")
    }

    @Test func aChainKeepsOnlyItsFrontierAlive() throws {
        let count = 50
        var book = book(try graph((0..<count).map { ("t\($0)", $0 == 0 ? [] : ["t\($0 - 1)"], false) }))
        weak var first: TaskOperation?
        for index in 0..<count {
            let made = start(index, in: &book)
            if index == 0 { first = made }
            book.end(index)
        }
        // t0's operation was held by t1's as a dependency; once t1 ended and t2 was made, nothing held it.
        #expect(first == nil)
    }

    @Test func aNeedIsKeptUntilEveryDependentStartedOrEndedWithoutStarting() throws {
        var book = book(try graph([("a", [], false), ("b", ["a"], false), ("c", ["a"], false)]))
        weak var a: TaskOperation?
        a = start(0, in: &book)
        book.end(0)
        var b: TaskOperation? = start(1, in: &book)
        #expect(b?.dependencies.count == 1)
        book.end(1)
        b = nil
        #expect(a != nil, "c may still start and take a as its dependency")
        book.end(2)  // c skipped: it never starts
        #expect(a == nil)
    }

    @Test func aServiceIsNobodysDependency() throws {
        var book = book(try graph([("server", [], true), ("client", ["server"], false)]))
        start(0, in: &book)
        let client = start(1, in: &book)
        #expect(client.dependencies.isEmpty)
    }
}
