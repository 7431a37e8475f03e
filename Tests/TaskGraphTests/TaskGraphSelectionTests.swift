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

    @Test func namesRunInTheOrderGivenWhileTheNeedsEachBringsInStaySideBySide() throws {
        var diagnostics = Diagnostics()
        // `lint` first: `package` brings in fetch, build, make[a], make[b], docs and itself; of those, the
        // ones whose needs were all brought in before (fetch, and docs, whose `lint` came first) wait for lint.
        let graph = try #require(try sample().selecting(["lint", "package"], diagnostics: &diagnostics))

        #expect(graph.needsByID == [
            "fetch": ["lint"], "lint": [], "build": ["fetch"], "make[a]": ["build"], "make[b]": ["build"],
            "docs": ["lint"], "package": ["make[a]", "make[b]", "docs"],
        ])
        #expect(diagnostics.all.isEmpty)
    }

    @Test func aNameAlreadyBroughtInAddsNoWaitAndTheNextWaitsForTheOneBefore() throws {
        var diagnostics = Diagnostics()
        // `build` comes with `package`; `lint`, already needed by docs, adds nothing; `test` brings in only
        // itself, and waits for `package`, the last name that brought in anything.
        let graph = try #require(try sample().selecting(["package", "build", "lint", "test"], diagnostics: &diagnostics))

        #expect(graph.needsByID["build"] == ["fetch"])
        #expect(graph.needsByID["lint"] == [])
        #expect(graph.needsByID["test"] == ["make[a]", "package"])
    }

    @Test func anOrderEdgeIsLocatedAtTheWaitingTask() throws {
        let full = try sample()
        var diagnostics = Diagnostics()
        let graph = try #require(full.selecting(["lint", "fetch"], diagnostics: &diagnostics))
        let fetch = try #require(graph.index(of: "fetch"))

        #expect(graph.ids(graph.dependencies[fetch]) == ["lint"])
        #expect(graph.dependencyLocations[fetch] == [graph.nodes[fetch].spec.location])
    }
}


/// Names on the command line beyond ids: aliases, internal tasks and includes' goals (docs/cli.md, "run").
@Suite struct TaskGraphNamingTests {
    private func graph(_ yaml: String) throws -> TaskGraph {
        var diagnostics = Diagnostics()
        let graph = PipelineCheck.graph(yaml: yaml, diagnostics: &diagnostics)
        #expect(diagnostics.all.isEmpty, "\(diagnostics.all)")
        return try #require(graph)
    }

    static let yaml = """
        version: 1
        tasks:
          gen: {run: gen, internal: true}
          build: {run: make, needs: [gen], aliases: [b]}
          lint: {run: lint}
          orphan: {run: echo, internal: true}
        """

    @Test func anAliasSelectsItsTask() throws {
        var diagnostics = Diagnostics()
        let selected = try #require(try graph(Self.yaml).selecting(["b"], diagnostics: &diagnostics))
        #expect(selected.allIDs == ["gen", "build"])
        #expect(try graph(Self.yaml).resolvedName("b") == "build")
    }

    @Test func anInternalTaskCannotBeNamedAndTheErrorSaysWhoNeedsIt() throws {
        var diagnostics = Diagnostics()
        #expect(try graph(Self.yaml).selecting(["gen", "orphan"], diagnostics: &diagnostics) == nil)
        #expect(diagnostics.all.map(\.message) == [
            "task 'gen' is internal: it runs only when a task that runs needs it, and cannot be named; it is needed by 'build'",
            "task 'orphan' is internal: it runs only when a task that runs needs it, and cannot be named; no task needs it",
        ])
    }

    @Test func aBareRunLeavesOutInternalTasksThatNothingThatRunsNeeds() throws {
        var diagnostics = Diagnostics()
        let selected = try #require(try graph(Self.yaml).defaultSelection(diagnostics: &diagnostics))
        #expect(selected.allIDs == ["gen", "build", "lint"])
    }

    @Test func aCycleIsReportedBesideAnUnknownNeed() {
        var diagnostics = Diagnostics()
        let graph = PipelineCheck.graph(yaml: """
            version: 1
            tasks:
              a: {run: echo, needs: [b, nope]}
              b: {run: echo, needs: [a]}
            """, diagnostics: &diagnostics)
        #expect(graph == nil)
        #expect(diagnostics.sorted.filter { $0.severity == .error }.map(\.message) == [
            "unknown task 'nope' in 'needs'; no task has that id",
            "dependency cycle: a -> b -> a",
        ])
    }
}
