import JobGraphBasics
import PipelineModel
import Testing
@testable import TaskGraph

@Suite struct TaskGraphBuildingTests {
    @Test func staticFanOutExpandsInPlaceInFileOrder() throws {
        var sketch = PipelineSketch()
        sketch.task("setup")
        sketch.task("make", items: ["a", "b", "c"])
        sketch.task("test")
        let graph = try #require(sketch.graph().graph)

        #expect(graph.allIDs == ["setup", "make[a]", "make[b]", "make[c]", "test"])
        #expect(graph.nodes.map(\.index) == [0, 1, 2, 3, 4])
        #expect(graph.nodes.map { $0.item?.value } == [nil, "a", "b", "c", nil])
        #expect(graph.nodes.map { $0.item?.index } == [nil, 0, 1, 2, nil])
        #expect(graph.nodes[2].item?.location == PipelineSketch.at(10, 18))
        #expect(graph.nodes[2].baseID == "make")
        #expect(graph.nodes.allSatisfy { !$0.isDynamicFanOut })
    }

    /// The schema always allowed `name[item]` in `needs`; the loader refused it as an unknown task.
    @Test func aNeedMayNameOneItemOfAFanOutFromTheFile() throws {
        var diagnostics = Diagnostics()
        let graph = PipelineCheck.graph(yaml: """
            version: 1
            tasks:
              make: {foreach: [a, b], run: "echo {{ item }}"}
              test: {needs: ["make[a]"], run: "echo test"}
            """, diagnostics: &diagnostics)
        #expect(diagnostics.all.isEmpty, "\(diagnostics.all)")
        #expect(graph?.needsByID["test"] == ["make[a]"])

        var unknownItem = Diagnostics()
        _ = PipelineCheck.graph(yaml: """
            version: 1
            tasks:
              make: {foreach: [a, b], run: "echo {{ item }}"}
              test: {needs: ["make[c]"], run: "echo test"}
            """, diagnostics: &unknownItem)
        #expect(unknownItem.all.map { "\($0.location?.line ?? 0):\($0.location?.column ?? 0): \($0.message)" }
            == ["4:18: task 'test' needs unknown task 'make[c]'; did you mean 'make[a]'?"])
    }

    @Test func needingAFanOutTaskNeedsEveryItem() throws {
        var sketch = PipelineSketch()
        sketch.task("make", items: ["a", "b"])
        sketch.task("test", needs: ["make"])
        let graph = try #require(sketch.graph().graph)

        #expect(graph.needsByID["test"] == ["make[a]", "make[b]"])
        let entry = try #require(sketch.location(ofNeed: "make", in: "test"))
        #expect(graph.dependencyLocations[2] == [entry, entry])
        #expect(graph.dependents[0] == [2])
        #expect(graph.dependents[1] == [2])
    }

    @Test func aFanOutTasksOwnNeedsApplyToEachItem() throws {
        var sketch = PipelineSketch()
        sketch.task("setup")
        sketch.task("lint")
        sketch.task("make", needs: ["setup", "lint"], items: ["a", "b"])
        let graph = try #require(sketch.graph().graph)

        #expect(graph.needsByID["make[a]"] == ["setup", "lint"])
        #expect(graph.needsByID["make[b]"] == ["setup", "lint"])
        #expect(graph.ids(graph.dependents[0]) == ["make[a]", "make[b]"])
    }

    @Test func anItemIDInNeedsMeansThatItemOnly() throws {
        var sketch = PipelineSketch()
        sketch.task("make", items: ["a", "b"])
        sketch.task("test", needs: ["make[b]"])
        let graph = try #require(sketch.graph().graph)

        #expect(graph.needsByID["test"] == ["make[b]"])
    }

    @Test func anEdgeNamedTwiceIsKeptOnceAtItsFirstEntry() throws {
        var sketch = PipelineSketch()
        sketch.task("make", items: ["a", "b"])
        sketch.task("test", needs: ["make[a]", "make"])
        let graph = try #require(sketch.graph().graph)

        #expect(graph.needsByID["test"] == ["make[a]", "make[b]"])
        let itemEntry = try #require(sketch.location(ofNeed: "make[a]", in: "test"))
        let baseEntry = try #require(sketch.location(ofNeed: "make", in: "test"))
        #expect(graph.dependencyLocations[2] == [itemEntry, baseEntry])
    }

    @Test func eachItemOfAFanOutKeepsARepeatedEdgeOnce() throws {
        var sketch = PipelineSketch()
        sketch.task("make", items: ["a", "b"])
        sketch.task("test", needs: ["make", "make[b]"], items: ["x", "y"])
        let graph = try #require(sketch.graph().graph)

        #expect(graph.needsByID["test[x]"] == ["make[a]", "make[b]"])
        #expect(graph.needsByID["test[y]"] == ["make[a]", "make[b]"])
        #expect(graph.dependents[1] == [2, 3])
    }

    @Test func aDynamicFanOutStaysOneMarkedNode() throws {
        var sketch = PipelineSketch()
        sketch.task("fetch-list")
        sketch.task("photo", needs: ["fetch-list"], itemsFrom: "build/photos.json")
        sketch.task("album", needs: ["photo"])
        let graph = try #require(sketch.graph().graph)

        #expect(graph.allIDs == ["fetch-list", "photo", "album"])
        #expect(graph.nodes.map(\.isDynamicFanOut) == [false, true, false])
        #expect(graph.nodes[1].item == nil)
        #expect(graph.nodes[1].displayName == "photo[*]")
        #expect(graph.needsByID["album"] == ["photo"])
    }

    @Test func anEmptyFanOutLeavesNoNodesAndNoNeeds() throws {
        var sketch = PipelineSketch()
        sketch.task("make", items: [])
        sketch.task("test", needs: ["make"])
        let graph = try #require(sketch.graph().graph)

        #expect(graph.allIDs == ["test"])
        #expect(graph.dependencies == [[]])
    }

    @Test func aRepeatedForeachItemIsAnError() {
        var sketch = PipelineSketch()
        sketch.task("make", items: ["a", "b", "a"])
        let (graph, diagnostics) = sketch.graph()

        #expect(graph == nil)
        #expect(rendered(diagnostics) == ["pipeline.yaml:6:21: error: duplicate item 'a' in foreach of task 'make'"])
    }

    @Test func needingAnItemOfADynamicFanOutIsAnErrorWithAHint() {
        var sketch = PipelineSketch()
        sketch.task("photo", itemsFrom: "photos.json")
        sketch.task("album", needs: ["photo[0]"])
        let (graph, diagnostics) = sketch.graph()

        #expect(graph == nil)
        #expect(rendered(diagnostics) == [
            "pipeline.yaml:9:13: error: task 'album' needs unknown task 'photo[0]'; did you mean 'photo'?",
        ])
    }

    @Test func nodesAreFoundByIDAndByTheNameAUserTypes() throws {
        var sketch = PipelineSketch()
        sketch.task("setup")
        sketch.task("make", items: ["a", "b"])
        let graph = try #require(sketch.graph().graph)

        #expect(graph.index(of: "make[b]") == 2)
        #expect(graph.index(of: "setup") == 0)
        #expect(graph.index(of: "make") == nil)
        #expect(graph.indices(named: "make") == 1..<3)
        #expect(graph.indices(named: "make[a]") == 1..<2)
        #expect(graph.indices(named: "nothing") == nil)
    }

    @Test func qualityOfServiceComesFromTheTaskThenItsQueue() throws {
        var sketch = PipelineSketch(queues: [("network", .utility), ("plain", nil)])
        sketch.task("own", queue: "network", qos: .background)
        sketch.task("inherited", queue: "network")
        sketch.task("unset", queue: "plain")
        sketch.task("none")
        let graph = try #require(sketch.graph().graph)

        #expect(graph.nodes.indices.map { graph.qualityOfService(ofNode: $0) } == [.background, .utility, nil, nil])
        #expect(graph.qualityOfService(ofNode: 99) == nil)
    }
}
