import JobGraphBasics
import PipelineModel
import Testing
@testable import TaskGraph

@Suite struct TaskGraphSelectionTests {
    private func sample() throws -> TaskGraph {
        var sketch = PipelineSketch()
        sketch.task("fetch")
        sketch.task("lint")
        sketch.task("build", needs: ["fetch"])
        sketch.task("make", needs: ["build"], items: ["a", "b"])
        sketch.task("test", needs: ["make[a]"])
        sketch.task("docs", needs: ["lint"])
        sketch.task("package", needs: ["make", "docs"])
        return try #require(sketch.graph().graph)
    }

    @Test func selectionKeepsTheNamedTasksAndEverythingTheyNeedOnly() throws {
        var diagnostics = Diagnostics()
        let graph = try #require(try sample().selecting(["test"], diagnostics: &diagnostics))

        #expect(graph.allIDs == ["fetch", "build", "make[a]", "test"])
        #expect(graph.nodes.map(\.index) == [0, 1, 2, 3])
        #expect(graph.needsByID == ["fetch": [], "build": ["fetch"], "make[a]": ["build"], "test": ["make[a]"]])
        #expect(graph.dependents == [[1], [2], [3], []])
        #expect(graph.topologicalOrder == [0, 1, 2, 3])
        #expect(graph.levels == [0, 1, 2, 3])
        #expect(graph.index(of: "test") == 3)
        #expect(diagnostics.all.isEmpty)
    }

    @Test func aFanOutTasksNameSelectsAllItsItems() throws {
        var diagnostics = Diagnostics()
        let graph = try #require(try sample().selecting(["make", "lint"], diagnostics: &diagnostics))

        #expect(graph.allIDs == ["fetch", "lint", "build", "make[a]", "make[b]"])
        #expect(graph.indices(named: "make") == 3..<5)
    }

    @Test func selectionKeepsEachEdgesNeedsEntry() throws {
        let full = try sample()
        var diagnostics = Diagnostics()
        let graph = try #require(full.selecting(["package"], diagnostics: &diagnostics))

        #expect(graph.allIDs == ["fetch", "lint", "build", "make[a]", "make[b]", "docs", "package"])
        let package = try #require(graph.index(of: "package"))
        let original = try #require(full.index(of: "package"))
        #expect(graph.dependencyLocations[package] == full.dependencyLocations[original])
        #expect(graph.ids(graph.dependencies[package]) == ["make[a]", "make[b]", "docs"])
    }

    @Test func anUnknownNameIsAnErrorWithoutALocationAndAHint() throws {
        var diagnostics = Diagnostics()
        let graph = try sample().selecting(["tset", "package", "nothing-like-it"], diagnostics: &diagnostics)

        #expect(graph == nil)
        #expect(rendered(diagnostics) == [
            "error: unknown task 'tset'; did you mean 'test'?",
            "error: unknown task 'nothing-like-it'",
        ])
    }
}
