import PipelineModel
import TaskGraph

/// Turns a graph node into the work of one attempt: templates rendered, environment merged, paths made
/// absolute. Pure: reads neither the disk nor the process's environment.
struct WorkResolver: Sendable {
    let graph: TaskGraph
    let configuration: RunConfiguration
    private let variables: [String: String]
    /// The caller's environment, then the pipeline's `env`, then the vars (contract: "vars … also exported").
    private let baseEnvironment: [String: String]

    init(graph: TaskGraph, configuration: RunConfiguration) throws(TemplateError) {
        self.graph = graph
        self.configuration = configuration
        var variables: [String: String] = [:]
        for variable in graph.pipeline.variables { variables[variable.name] = variable.value }
        self.variables = variables
        var environment = configuration.environment
        let context = TemplateContext(variables: variables)
        for entry in graph.pipeline.environment { environment[entry.name] = try entry.value.rendered(in: context) }
        for (name, value) in variables { environment[name] = value }
        baseEnvironment = environment
    }

    func context(for node: TaskNode) -> TemplateContext {
        TemplateContext(variables: variables, item: node.item.map { .string($0.value) })
    }

    func work(for index: Int, attempt: Int) throws(TemplateError) -> TaskWork {
        let node = graph.nodes[index]
        let spec = node.spec
        let context = context(for: node)
        var environment = baseEnvironment
        for entry in spec.environment { environment[entry.name] = try entry.value.rendered(in: context) }
        let directory = try spec.cwd.map { template throws(TemplateError) in
            absolute(try template.rendered(in: context, as: .confinedPath), in: configuration.pipelineDirectory)
        } ?? configuration.pipelineDirectory
        let work: TaskWork.Work
        switch spec.action {
        case .run(let commands):
            work = .shell(commands: try commands.map { command throws(TemplateError) in try command.rendered(in: context, as: .shellQuoted) }, concurrently: false)
        case .parallel(let commands):
            work = .shell(commands: try commands.map { command throws(TemplateError) in try command.rendered(in: context, as: .shellQuoted) }, concurrently: true)
        case .download(let download):
            work = .download(
                url: try download.url.rendered(in: context),
                destination: absolute(try download.destination.rendered(in: context, as: .confinedPath), in: directory),
                sha256: download.sha256, maxBytes: download.maxBytes)
        case .filter(let filter):
            work = .filter(FilterWork(
                input: absolute(try filter.input.rendered(in: context, as: .confinedPath), in: directory),
                output: absolute(try filter.output.rendered(in: context, as: .confinedPath), in: directory),
                spec: filter))
        }
        return TaskWork(
            id: node.id, attempt: attempt, work: work, workingDirectory: directory, environment: environment,
            niceness: graph.qualityOfService(ofNode: index)?.niceness ?? 0, timeout: spec.timeout,
            logPath: logPath(for: node.id))
    }

    /// `.jobgraph/logs/<task>.log`, with characters that cannot be in a file name replaced.
    func logPath(for id: TaskID) -> String {
        let name = String(id.rawValue.map { $0 == "/" || $0 == "\0" ? "_" : $0 })
        return configuration.logDirectory + "/" + name + ".log"
    }

    private func absolute(_ path: String, in directory: String) -> String {
        path.hasPrefix("/") ? path : directory + "/" + path
    }
}
