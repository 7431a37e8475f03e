import PipelineModel
import Testing
@testable import TaskGraph

@Suite struct TaskGraphOrderingTests {
    /// `a` first; `b` and `c` need `a`; `d` needs both.
    private func diamond() throws -> TaskGraph {
        var sketch = PipelineSketch()
        sketch.task("a")
        sketch.task("b", needs: ["a"])
        sketch.task("c", needs: ["a"])
        sketch.task("d", needs: ["b", "c"])
        return try #require(sketch.graph().graph)
    }

    @Test func amongReadyTasksTheEarliestInTheFileGoesFirst() throws {
        var sketch = PipelineSketch()
        sketch.task("deploy", needs: ["test", "docs"])
        sketch.task("test", needs: ["build"])
        sketch.task("build")
        sketch.task("docs")
        let graph = try #require(sketch.graph().graph)

        #expect(graph.ids(graph.topologicalOrder) == ["build", "test", "docs", "deploy"])
    }

    @Test func whenEveryTaskNeedsOnlyEarlierOnesTheOrderIsTheFileOrder() throws {
        var sketch = PipelineSketch()
        sketch.task("a")
        sketch.task("b", needs: ["a"])
        sketch.task("c")
        sketch.task("d", needs: ["c", "b"])
        let graph = try #require(sketch.graph().graph)
        #expect(graph.ids(graph.topologicalOrder) == ["a", "b", "c", "d"])

        // One need pointing forward: `b` must wait for `c`, written after it.
        var forward = PipelineSketch()
        forward.task("a")
        forward.task("b", needs: ["a", "c"])
        forward.task("c")
        forward.task("d", needs: ["c"])
        let reordered = try #require(forward.graph().graph)
        #expect(reordered.ids(reordered.topologicalOrder) == ["a", "c", "b", "d"])
    }

    @Test func topologicalOrderRespectsEveryEdgeAndIsTheSameEachTime() throws {
        // Needs pointing both ways in the file, from a fixed pseudo-random sequence.
        var random = LinearCongruential(seed: 7)
        var sketch = PipelineSketch()
        let count = 300
        let position = (0..<count).map { _ in random.next(below: 1_000_000) }
        for index in 0..<count {
            // Only need tasks with a smaller random position, so the graph has no cycle.
            let needs = (0..<3).map { _ in random.next(below: count) }.filter { position[$0] < position[index] }
            sketch.task("t\(index)", needs: Array(Set(needs.map { "t\($0)" })).sorted())
        }
        let graph = try #require(sketch.graph().graph)
        let again = try #require(sketch.graph().graph)

        #expect(graph.topologicalOrder.sorted() == Array(0..<count))
        var place = [Int](repeating: 0, count: count)
        for (rank, node) in graph.topologicalOrder.enumerated() { place[node] = rank }
        for node in 0..<count {
            #expect(graph.dependencies[node].allSatisfy { place[$0] < place[node] })
        }
        #expect(again.topologicalOrder == graph.topologicalOrder)
    }

    @Test func levelsAreTheLongestDistanceFromATaskThatNeedsNothing() throws {
        var sketch = PipelineSketch()
        sketch.task("a")
        sketch.task("b", needs: ["a"])
        sketch.task("c", needs: ["b"])
        sketch.task("d", needs: ["a", "c"])
        sketch.task("lone")
        let graph = try #require(sketch.graph().graph)

        #expect(graph.levels == [0, 1, 2, 3, 0])
    }

    @Test func criticalPathIncludesTheTaskAndItsLongestDependentChain() throws {
        let graph = try diamond()

        #expect(graph.criticalPathLengths(durations: [1, 2, 5, 1]) == [7, 3, 6, 1])
        #expect(graph.criticalPathLengths() == [3, 2, 2, 1])
    }

    @Test func missingOrInvalidDurationsCountAsZero() throws {
        let graph = try diamond()

        #expect(graph.criticalPathLengths(durations: [1, -4, .nan]) == [1, 0, 0, 0])
    }

    @Test func hundredThousandTasksWithTwoNeedsEachAreOrderedAndRanked() throws {
        let count = 100_000
        var sketch = PipelineSketch()
        sketch.task("t0")
        sketch.task("t1", needs: ["t0"])
        for index in 2..<count { sketch.task("t\(index)", needs: ["t\(index - 1)", "t\(index / 2)"]) }
        let graph = try #require(sketch.graph().graph)

        #expect(graph.topologicalOrder == Array(0..<count))
        let lengths = graph.criticalPathLengths()
        #expect(lengths[0] == Double(count))
        #expect(lengths[count - 1] == 1)
    }
}

/// A tiny deterministic generator, so a failing case can be replayed.
struct LinearCongruential {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next(below bound: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(bound))
    }
}
