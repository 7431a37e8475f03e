import JobGraphBasics
import PipelineModel
import Testing
@testable import TaskGraph

/// The rules of docs/pipeline.md, "Dependencies found from files", on rendered paths.
@Suite struct TaskGraphFileNeedsTests {
    private func graph(_ ids: [String], needs: [String: [String]] = [:]) throws -> TaskGraph {
        var sketch = PipelineSketch()
        for id in ids { sketch.task(id, needs: needs[id] ?? []) }
        return try #require(sketch.graph().graph)
    }

    private func paths(_ inputs: [String], _ outputs: [String], line: Int) -> NodePaths {
        NodePaths(inputs: inputs.map { DeclaredPath(path: $0, location: PipelineSketch.at(line, 5)) },
                  outputs: outputs.map { DeclaredPath(path: $0, location: PipelineSketch.at(line + 1, 5)) })
    }

    @Test func aLiteralInputNeedsTheTaskThatDeclaresTheSamePathOrAGlobThatMatchesIt() throws {
        let graph = try graph(["use", "exact", "globbed", "other"])
        var diagnostics = Diagnostics()
        let inferred = try #require(graph.addingFileNeeds(
            [paths(["data/a.txt"], [], line: 3), paths([], ["data/a.txt"], line: 7), paths([], ["data/*.txt"], line: 11),
             paths([], ["data/b/*.txt", "elsewhere/a.txt"], line: 15)],
            diagnostics: &diagnostics))
        #expect(inferred.needsByID["use"] == ["exact", "globbed"])
        #expect(inferred.inferredNeed(ofNode: 0, edge: 0) == InferredNeed(
            path: "data/a.txt", input: PipelineSketch.at(3, 5), output: PipelineSketch.at(8, 5)))
        #expect(inferred.isFoundFromFiles(node: 0, edge: 1))
        #expect(diagnostics.all.isEmpty)
    }

    @Test func anInputGlobNeedsEveryTaskWhoseLiteralOutputItMatchesButTwoGlobsAreNotCompared() throws {
        let graph = try graph(["use", "a", "b", "hidden", "globbed"])
        var diagnostics = Diagnostics()
        let inferred = try #require(graph.addingFileNeeds(
            [paths(["out/**/*.o"], [], line: 3), paths([], ["out/x/a.o"], line: 7), paths([], ["out/b.o"], line: 11),
             paths([], ["out/.cache/c.o"], line: 15), paths([], ["out/*.o"], line: 19)],
            warnings: .overlappingGlobs, diagnostics: &diagnostics))
        // `**` does not enter hidden folders, as on disk.
        #expect(inferred.needsByID["use"] == ["a", "b"])
        #expect(inferred.inferredNeed(ofNode: 0, edge: 0)?.path == "out/x/a.o", "an input glob shows the output it matched")
        let warning = try #require(diagnostics.all.first)
        #expect(warning.severity == .warning)
        #expect(warning.message.contains("'out/**/*.o'") && warning.message.contains("'out/*.o'"), "\(warning.message)")
        #expect(warning.location == PipelineSketch.at(3, 5))
        #expect(diagnostics.all.last?.location == PipelineSketch.at(20, 5), "a note names the output glob's place")
    }

    @Test func aTopLevelGlobAndAnAbsolutePathAreComparedAsTheyAre() throws {
        let graph = try graph(["use", "top", "absolute"])
        var diagnostics = Diagnostics()
        let inferred = try #require(graph.addingFileNeeds(
            [paths(["notes.txt", "/etc/jobgraph.conf"], [], line: 3), paths([], ["*.txt"], line: 7), paths([], ["/etc/*.conf"], line: 11)],
            diagnostics: &diagnostics))
        #expect(inferred.needsByID["use"] == ["top", "absolute"])
    }

    @Test func aTaskNeverNeedsItselfAndAWrittenNeedIsNotAddedTwice() throws {
        let graph = try graph(["gen", "use"], needs: ["use": ["gen"]])
        var diagnostics = Diagnostics()
        let inferred = try #require(graph.addingFileNeeds(
            [paths(["cache.db"], ["cache.db", "gen.txt"], line: 3), paths(["gen.txt"], [], line: 7)],
            diagnostics: &diagnostics))
        #expect(inferred.needsByID == ["gen": [], "use": ["gen"]])
        #expect(!inferred.isFoundFromFiles(node: 1, edge: 0), "the `needs` entry made the edge")
    }

    @Test func aCycleThroughFilesNamesTheInputAndTheOutputOfEachStep() throws {
        let graph = try graph(["a", "b"])
        var diagnostics = Diagnostics()
        let inferred = graph.addingFileNeeds(
            [paths(["y.txt"], ["x.txt"], line: 3), paths(["x.txt"], ["y.txt"], line: 7)],
            diagnostics: &diagnostics)
        #expect(inferred == nil)
        let messages = diagnostics.all.map(\.message)
        #expect(messages.contains { $0.hasPrefix("dependency cycle:") }, "\(messages)")
        #expect(messages.contains("'a' needs 'b': it reads 'y.txt' here"), "\(messages)")
        #expect(diagnostics.all.contains { $0.message == "which 'b' writes here" && $0.location == PipelineSketch.at(8, 5) })
    }

    @Test func aSelectionKeepsWhyEachNeedWasFound() throws {
        let graph = try graph(["gen", "use", "other"])
        var diagnostics = Diagnostics()
        let inferred = try #require(graph.addingFileNeeds(
            [paths([], ["gen.txt"], line: 3), paths(["gen.txt"], [], line: 7), nil],
            diagnostics: &diagnostics))
        let selected = try #require(inferred.selecting(["use"], diagnostics: &diagnostics))
        #expect(selected.allIDs == ["gen", "use"], "naming a task brings in what writes its inputs")
        #expect(selected.inferredNeed(ofNode: 1, edge: 0)?.path == "gen.txt")
        #expect(selected.dependencyLocation(ofNode: 1, edge: 0) == PipelineSketch.at(7, 5))
    }
}
