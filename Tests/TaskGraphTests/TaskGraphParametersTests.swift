import JobGraphBasics
import PipelineModel
import Testing
import TaskGraph

/// Binding the `NAME=VALUE` words of a run to the tasks' params (docs/pipeline.md, "Task parameters").
@Suite struct TaskGraphParametersTests {
    static let yaml = """
        version: 1
        tasks:
          build: {run: "true"}
          deploy:
            needs: [build]
            params:
              ENV: {enum: [staging, prod], default: staging}
              OUT: {type: path, default: dist}
              DIR: {type: path}
              NOTE: {}
            run: echo {{ ENV }}
        """

    private func bound(_ words: [String]) throws -> (graph: TaskGraph?, messages: [String]) {
        var diagnostics = Diagnostics()
        let whole = try #require(PipelineCheck.graph(yaml: Self.yaml, diagnostics: &diagnostics))
        let arguments = TaskArguments(words, diagnostics: &diagnostics)
        let selected = whole.selecting(arguments.names, diagnostics: &diagnostics)
        let graph = selected?.binding(arguments, invocationDirectory: "/here", pipelineDirectory: "/project", diagnostics: &diagnostics)
        return (graph, diagnostics.all.map(\.message))
    }

    @Test func givenValuesThenDefaultsThenEmptyAndPathsMadeAbsolute() throws {
        let result = try bound(["build", "deploy", "DIR=x/y", "ENV=prod"])
        let graph = try #require(result.graph, "\(result.messages)")
        let deploy = try #require(graph.pipeline.tasks.first { $0.id == "deploy" })
        #expect(graph.parameterValues(of: deploy) == ["ENV": "prod", "DIR": "/here/x/y", "OUT": "/project/dist", "NOTE": ""])
        let build = try #require(graph.pipeline.tasks.first { $0.id == "build" })
        #expect(graph.parameterValues(of: build) == nil)
    }

    @Test func wordsSplitAtTaskNames() {
        var diagnostics = Diagnostics()
        let arguments = TaskArguments(["X=1", "deploy", "ENV=prod", "a=b=c", "build", "--not-a-name=1"], diagnostics: &diagnostics)
        #expect(arguments.names == ["deploy", "build", "--not-a-name=1"])
        #expect(arguments.values.map { $0.map { "\($0.name)=\($0.value)" } } == [["ENV=prod", "a=b=c"], [], []])
        #expect(diagnostics.all.count == 1)
    }
}
