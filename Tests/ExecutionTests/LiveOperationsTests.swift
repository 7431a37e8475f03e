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

private func operation(_ index: Int) -> TaskOperation {
    TaskOperation(index: index, name: "t\(index)", begin: { _ in })
}

/// Operations are made when their task starts and let go once nothing needs them: a long run keeps its
/// frontier in memory, not its whole graph, with the same dependency edges as before.
@Suite struct LiveOperationsTests {
    @Test func aTaskStartedAfterItsNeedsHasThemAsDependencies() throws {
        let graph = try graph([("a", [], false), ("b", [], false), ("c", ["a", "b"], false)])
        var live = LiveOperations(graph: graph, isService: { _ in false })
        let a = try #require(live.operation(for: 0) { operation(0) })
        let b = try #require(live.operation(for: 1) { operation(1) })
        _ = live.end(0)
        _ = live.end(1)
        let c = try #require(live.operation(for: 2) { operation(2) })
        #expect(c.dependencies.count == 2 && c.dependencies.contains(a) && c.dependencies.contains(b))
    }

    @Test func aRetryGetsTheSameOperationAndAnEndedTaskNone() throws {
        let graph = try graph([("a", [], false)])
        var live = LiveOperations(graph: graph, isService: { _ in false })
        let first = try #require(live.operation(for: 0) { operation(0) })
        #expect(live.operation(for: 0) { operation(0) } === first)
        #expect(live.end(0) === first)
        #expect(live.operation(for: 0) { operation(0) } == nil)
        #expect(live.end(0) == nil)
    }

    @Test func aChainKeepsOnlyItsFrontierAlive() throws {
        let count = 50
        let graph = try graph((0..<count).map { ("t\($0)", $0 == 0 ? [] : ["t\($0 - 1)"], false) })
        var live = LiveOperations(graph: graph, isService: { _ in false })
        weak var first: TaskOperation?
        for index in 0..<count {
            let made = try #require(live.operation(for: index) { operation(index) })
            if index == 0 { first = made }
            _ = live.end(index)
        }
        // t0's operation was held by t1's as a dependency; once t1 ended and t2 was made, nothing held it.
        #expect(first == nil)
    }

    @Test func aNeedIsKeptUntilEveryDependentStartedOrEndedWithoutStarting() throws {
        let graph = try graph([("a", [], false), ("b", ["a"], false), ("c", ["a"], false)])
        var live = LiveOperations(graph: graph, isService: { _ in false })
        weak var a: TaskOperation?
        a = live.operation(for: 0) { operation(0) }
        _ = live.end(0)
        var b = live.operation(for: 1) { operation(1) }
        #expect(b?.dependencies.count == 1)
        _ = live.end(1)
        b = nil
        #expect(a != nil, "c may still start and take a as its dependency")
        _ = live.end(2)  // c skipped: it never starts
        #expect(a == nil)
    }

    @Test func aServiceIsNobodysDependency() throws {
        let graph = try graph([("server", [], true), ("client", ["server"], false)])
        var live = LiveOperations(graph: graph, isService: { graph.nodes[$0].spec.service != nil })
        _ = live.operation(for: 0) { operation(0) }
        let client = try #require(live.operation(for: 1) { operation(1) })
        #expect(client.dependencies.isEmpty)
    }
}
