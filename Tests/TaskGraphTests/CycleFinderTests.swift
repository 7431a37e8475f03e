import JobGraphBasics
import PipelineModel
import Testing
@testable import TaskGraph

@Suite struct CycleFinderTests {
    @Test func aCycleOfThreeIsOneErrorAtTheClosingEntryWithANotePerHop() throws {
        var sketch = PipelineSketch()
        sketch.task("alpha", needs: ["beta"])
        sketch.task("beta", needs: ["gamma"])
        sketch.task("gamma", needs: ["alpha"])
        let (graph, diagnostics) = sketch.graph()

        #expect(graph == nil)
        #expect(rendered(diagnostics) == [
            "pipeline.yaml:13:13: error: dependency cycle: alpha -> beta -> gamma -> alpha",
            "pipeline.yaml:5:13: note: 'alpha' needs 'beta' here",
            "pipeline.yaml:9:13: note: 'beta' needs 'gamma' here",
            "pipeline.yaml:13:13: note: 'gamma' needs 'alpha' here",
        ])
        #expect(diagnostics.all.filter { $0.severity == .note }.map(\.location) == [
            sketch.location(ofNeed: "beta", in: "alpha"),
            sketch.location(ofNeed: "gamma", in: "beta"),
            sketch.location(ofNeed: "alpha", in: "gamma"),
        ])
    }

    @Test func separateCyclesAreEachReported() {
        var sketch = PipelineSketch()
        sketch.task("free")
        sketch.task("ping", needs: ["free", "pong"])
        sketch.task("pong", needs: ["ping"])
        sketch.task("x", needs: ["z"])
        sketch.task("y", needs: ["x"])
        sketch.task("z", needs: ["y"])
        sketch.task("after", needs: ["z", "free"])
        let (graph, diagnostics) = sketch.graph()

        #expect(graph == nil)
        #expect(diagnostics.errorCount == 2)
        #expect(rendered(diagnostics) == [
            "pipeline.yaml:13:13: error: dependency cycle: ping -> pong -> ping",
            "pipeline.yaml:9:19: note: 'ping' needs 'pong' here",
            "pipeline.yaml:13:13: note: 'pong' needs 'ping' here",
            "pipeline.yaml:21:13: error: dependency cycle: x -> z -> y -> x",
            "pipeline.yaml:17:13: note: 'x' needs 'z' here",
            "pipeline.yaml:25:13: note: 'z' needs 'y' here",
            "pipeline.yaml:21:13: note: 'y' needs 'x' here",
        ])
    }

    @Test func aCycleThroughEveryItemOfAFanOutIsOneMistake() {
        var sketch = PipelineSketch()
        sketch.task("make", needs: ["test"], items: ["a", "b", "c"])
        sketch.task("test", needs: ["make"])
        let (graph, diagnostics) = sketch.graph()

        #expect(graph == nil)
        #expect(rendered(diagnostics) == [
            "pipeline.yaml:9:13: error: dependency cycle: make[a] -> test -> make[a]",
            "pipeline.yaml:5:13: note: 'make[a]' needs 'test' here",
            "pipeline.yaml:9:13: note: 'test' needs 'make[a]' here",
        ])
    }

    @Test func aTaskNeedingItselfIsACycleOfOne() {
        // The loader refuses `needs: [solo]` inside `solo`; a pipeline built in code reaches the graph.
        var sketch = PipelineSketch()
        sketch.task("solo", needs: ["solo"])
        let (graph, diagnostics) = sketch.graph()

        #expect(graph == nil)
        #expect(rendered(diagnostics) == [
            "pipeline.yaml:5:13: error: dependency cycle: solo -> solo",
            "pipeline.yaml:5:13: note: 'solo' needs 'solo' here",
        ])
    }

    @Test func aChainOf100000TasksBuildsWithoutRecursion() throws {
        let count = 100_000
        var sketch = PipelineSketch()
        sketch.task("t0")
        for index in 1..<count { sketch.task("t\(index)", needs: ["t\(index - 1)"]) }
        let graph = try #require(sketch.graph().graph)

        #expect(graph.topologicalOrder == Array(0..<count))
        #expect(graph.levels.last == count - 1)
        #expect(graph.criticalPathLengths().first == Double(count))
    }

    @Test func aCycleOf100000TasksIsReportedWholeWithoutRecursion() {
        let count = 100_000
        var sketch = PipelineSketch()
        for index in 0..<count { sketch.task("t\(index)", needs: ["t\((index + 1) % count)"]) }
        let (graph, diagnostics) = sketch.graph()

        #expect(graph == nil)
        #expect(diagnostics.errorCount == 1)
        #expect(diagnostics.all.count == count + 1)
        let error = diagnostics.all.first { $0.severity == .error }
        #expect(error?.location == sketch.location(ofNeed: "t0", in: "t\(count - 1)"))
        #expect(error?.message.hasPrefix("dependency cycle: t0 -> t1 -> t2 -> ") == true)
        #expect(error?.message.hasSuffix(" -> t99998 -> t99999 -> t0") == true)
    }

    @Test func reportingStopsAfterTheLimit() {
        // Every task needs the next and the first: one cycle per task.
        let count = CycleFinder.reportLimit + 5
        var sketch = PipelineSketch()
        for index in 0..<count { sketch.task("t\(index)", needs: ["t\(index + 1)", "t0"].filter { $0 != "t\(count)" }) }
        let (graph, diagnostics) = sketch.graph()

        #expect(graph == nil)
        #expect(diagnostics.errorCount == CycleFinder.reportLimit + 1)
        #expect(diagnostics.all.last?.message
            == "dependency cycle not shown: only the first \(CycleFinder.reportLimit) cycles are reported")
    }
}
