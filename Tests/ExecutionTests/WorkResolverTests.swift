import JobGraphBasics
import PipelineModel
import TaskGraph
import Testing
@testable import Execution

/// The check before a run resolves each task once (`checkedWork`); it must see what the task's start
/// sees (`work(for:)`) and what the declared-file checks see (`declaredPaths`).
@Suite struct WorkResolverTests {
    private static let yaml = """
        version: 1
        vars: {site: "http://127.0.0.1:9", folder: build, up: ../etc}
        tasks:
          compile: {run: "cc -o {{ folder }}/app main.c", inputs: [main.c], outputs: ["{{ folder }}/app"], cwd: src}
          fetch: {download: {url: "{{ site }}/a.png", to: "{{ folder }}/a.png"}, inputs: [urls.txt]}
          tint: {filter: {input: "{{ folder }}/a.png", output: "{{ folder }}/b.png", effect: sepia}, outputs: [log.txt]}
          escape: {run: "true", inputs: ["{{ folder }}/x"], outputs: ["{{ folder }}/{{ up }}"]}
          group: {parallel: ["true 1", "true 2", "true 3", "true 4"]}
          pair: {parallel: ["true 1", "true 2"]}
        """

    private func resolverAndTasks() throws -> (WorkResolver, [String: RunTask]) {
        var diagnostics = Diagnostics()
        let pipeline = try #require(PipelineLoader.load(yaml: Self.yaml, diagnostics: &diagnostics))
        let graph = try #require(TaskGraph.build(pipeline, diagnostics: &diagnostics))
        let configuration = RunConfiguration(jobs: 2, pipelineDirectory: "/work/p", stateDirectory: "/work/p/.jobgraph",
                                             environment: ["HOME": "/root"], processorCount: 2)
        let resolver = try WorkResolver(graph: graph, configuration: configuration)
        let tasks = Dictionary(uniqueKeysWithValues: graph.nodes.map { ($0.id.rawValue, RunTask(node: $0, graph: graph, queue: 0)) })
        return (resolver, tasks)
    }

    @Test(arguments: ["compile", "fetch", "tint"])
    func theCheckedWorkIsTheStartsWorkWithTheDeclaredPaths(id: String) throws {
        let (resolver, tasks) = try resolverAndTasks()
        let task = try #require(tasks[id])
        let checked = try resolver.checkedWork(for: task)
        let started = try resolver.work(for: task, attempt: 1)
        #expect(started.logPath == "/work/p/.jobgraph/logs/\(id).log" && checked.work.logPath.isEmpty)
        // `TaskWork` is not Equatable (its shared environment is a block of C strings): field by field.
        #expect(String(describing: checked.work.work) == String(describing: started.work))
        #expect(checked.work.id == started.id && checked.work.attempt == started.attempt)
        #expect(checked.work.workingDirectory == started.workingDirectory && checked.work.environment == started.environment)
        #expect(checked.work.niceness == started.niceness && checked.work.timeout == started.timeout)
        #expect(checked.work.processLimit == started.processLimit && checked.work.appendsToLog == started.appendsToLog)
        #expect(checked.work.sharedEnvironment === started.sharedEnvironment)
        let declared = try resolver.declaredPaths(for: task)
        #expect(checked.inputs == declared.inputs)
        #expect(checked.outputs == declared.outputs)
        #expect(checked.environmentNames == resolver.environmentNames(for: task))
    }

    @Test func aDownloadAndAFilterDeclareTheFilesTheyReadAndWrite() throws {
        let (resolver, tasks) = try resolverAndTasks()
        let fetch = try resolver.checkedWork(for: try #require(tasks["fetch"]))
        #expect(fetch.inputs == ["urls.txt"] && fetch.outputs == ["build/a.png"])
        let tint = try resolver.checkedWork(for: try #require(tasks["tint"]))
        #expect(tint.inputs == ["build/a.png"] && tint.outputs == ["log.txt", "build/b.png"])
        let compile = try resolver.checkedWork(for: try #require(tasks["compile"]))
        #expect(compile.work.workingDirectory == "/work/p/src" && compile.outputs == ["build/app"])
    }

    @Test func aGroupMayRunAsManyCommandsAtOnceAsJobsAndNoMoreThanItHas() throws {
        let (resolver, tasks) = try resolverAndTasks()
        #expect(try resolver.work(for: try #require(tasks["group"]), attempt: 1).processLimit == 2)
        #expect(try resolver.work(for: try #require(tasks["pair"]), attempt: 1).processLimit == 2)
        #expect(try resolver.work(for: try #require(tasks["compile"]), attempt: 1).processLimit == nil)
    }

    @Test func aPathLeavingThePipelinesFolderFailsTheCheckAsItFailsTheStart() throws {
        let (resolver, tasks) = try resolverAndTasks()
        let task = try #require(tasks["escape"])
        let expected = TemplateError(message: "outputs 'build/../etc' (from '{{ folder }}/{{ up }}'): the value '../etc' of {{ up }} "
            + "may not be an absolute path or contain '..'")
        #expect(throws: expected) { try resolver.work(for: task, attempt: 1) }
        #expect(throws: expected) { try resolver.checkedWork(for: task) }
    }
}
