import JobGraphBasics
import PipelineModel
import Testing
@testable import TaskGraph

/// A pipeline made without the loader (which refuses a repeated id itself) has no id table, so the
/// graph builder must still find a task declared twice.
@Suite struct TaskGraphDuplicateTests {
    @Test func aTaskDeclaredTwiceIsReportedAtTheSecond() {
        var sketch = PipelineSketch()
        sketch.task("a")
        sketch.task("a")
        let (graph, diagnostics) = sketch.graph()
        #expect(graph == nil)
        #expect(rendered(diagnostics) == ["pipeline.yaml:7:3: error: duplicate task 'a'"])
    }

    @Test func aLoadedPipelineUsesTheLoadersTableAndStillResolvesNeeds() throws {
        var diagnostics = Diagnostics()
        let graph = try #require(PipelineCheck.graph(
            yaml: "version: 1\ntasks:\n  a: {run: x}\n  b: {run: y, needs: [a]}\n  c: {run: z, foreach: [p, q], needs: [a, b]}\n  d: {run: w, needs: [c]}\n",
            diagnostics: &diagnostics))
        #expect(graph.allIDs == ["a", "b", "c[p]", "c[q]", "d"])
        #expect(graph.needsByID["d"] == ["c[p]", "c[q]"])
        #expect(graph.needsByID["c[q]"] == ["a", "b"])
        #expect(graph.index(of: "b") == 1)
        #expect(graph.indices(named: "c") == 2..<4)
        #expect(graph.index(of: "c[q]") == 3)
    }
}
