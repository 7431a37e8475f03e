import JobGraphBasics
import JobGraphSystem
import PipelineModel
import TaskGraph

/// Turns a task into the work of one attempt: templates rendered, environment merged, paths made
/// absolute. Pure: reads neither the disk nor the process's environment.
///
/// A class, though immutable: the Runner takes it out of its `Result` several times per task, and each
/// copy of a struct of a dozen references cost as many retains and releases (perf, 10,000-task run).
final class WorkResolver: Sendable {
    let graph: TaskGraph
    let configuration: RunConfiguration
    private let variables: [String: String]
    /// The caller's environment, then the pipeline's `env`, then the vars under `export`; a task adds the
    /// vars it uses and its params (docs/pipeline.md, "Which variables a task gets").
    private let baseEnvironment: [String: String]
    /// `baseEnvironment` encoded for spawning, given to every task that adds nothing to it.
    private let baseEnvironmentBlock: EnvironmentBlock?
    /// The pipeline's hooks run with every var: no definition holds their environment.
    private let hookEnvironment: [String: String]
    /// The names under `export`.
    private let exported: Set<String>
    /// `configuration.logDirectory` and a `/`.
    private let logFolder: String

    init(graph: TaskGraph, configuration: RunConfiguration) throws(TemplateError) {
        self.graph = graph
        self.configuration = configuration
        logFolder = configuration.logDirectory + "/"
        var variables: [String: String] = [:]
        for variable in graph.pipeline.variables { variables[variable.name] = variable.value }
        self.variables = variables
        var environment = configuration.environment
        let context = TemplateContext(variables: variables)
        for entry in graph.pipeline.environment { environment[entry.name] = try entry.value.rendered(in: context) }
        var hookEnvironment = environment
        for (name, value) in variables { hookEnvironment[name] = value }
        self.hookEnvironment = hookEnvironment
        exported = Set(graph.pipeline.exportedVariables)
        for name in graph.pipeline.exportedVariables { environment[name] = variables[name] }
        // A nested run's tasks get their own attempt number, never their caller's.
        environment[TaskWork.attemptVariable] = nil
        environment[TaskWork.cpusVariable] = nil
        baseEnvironment = environment
        baseEnvironmentBlock = EnvironmentBlock(environment, excluding: DescendantSweep.taskVariable)
    }

    /// The variables the task adds to the base environment, by name: the vars it uses that are not
    /// exported already, then its params, which shadow a var of the same name.
    private func ownVariables(of task: RunTask) -> [(name: String, value: String)] {
        var own: [(name: String, value: String)] = []
        let parameters = graph.parameterValues(of: task.spec)
        // An included file's variables (`web:BASE`) reach its tasks through their `env` (PipelineLoader).
        for name in task.spec.referencedNames where !exported.contains(name) && parameters?[name] == nil && !name.contains(":") {
            if let value = variables[name] { own.append((name, value)) }
        }
        if let parameters {
            for parameter in task.spec.parameters { own.append((parameter.name, parameters[parameter.name] ?? "")) }
        }
        return own
    }

    /// The values `{{ … }}` can name in the task: the vars, with its params over them.
    private func templateVariables(for task: RunTask) -> [String: String] {
        guard let parameters = graph.parameterValues(of: task.spec) else { return variables }
        return variables.merging(parameters) { _, parameter in parameter }
    }

    /// The task's values, and the folders its paths are checked against and joined to. Every caller that
    /// renders a path has already resolved the task's folder with `try`, so an unrenderable `cwd` falls
    /// back to the pipeline's folder here rather than throwing twice.
    /// - Parameter attempt: `{{ attempt }}` (a hook's is its task's last attempt).
    func context(for task: RunTask, attempt: Int = 1) -> TemplateContext {
        var context = TemplateContext(variables: templateVariables(for: task), item: task.item, index: task.itemIndex, pipelineDirectory: configuration.pipelineDirectory,
                                      workingDirectory: (try? fanOutDirectory(for: task)) ?? configuration.pipelineDirectory)
        context.attempt = attempt
        return context
    }

    /// The context in which `cwd` itself is rendered: relative to the pipeline's folder.
    private func folderContext(for task: RunTask, attempt: Int = 1) -> TemplateContext {
        var context = TemplateContext(variables: templateVariables(for: task), item: task.item, index: task.itemIndex, pipelineDirectory: configuration.pipelineDirectory)
        context.attempt = attempt
        return context
    }

    /// The task's environment: the base, the vars it uses and its params, then its own `env`.
    func environment(for task: RunTask, attempt: Int = 1) throws(TemplateError) -> [String: String] {
        try environment(for: task, adding: ownVariables(of: task), attempt: attempt)
    }

    private func environment(for task: RunTask, adding own: [(name: String, value: String)], attempt: Int) throws(TemplateError)
        -> [String: String] {
        var environment = baseEnvironment
        for (name, value) in own { environment[name] = value }
        guard !task.spec.environment.isEmpty else { return environment }
        let context = folderContext(for: task, attempt: attempt)
        for entry in task.spec.environment { environment[entry.name] = try entry.value.rendered(in: context) }
        return environment
    }

    /// The task's folder: its `cwd` under the pipeline's folder, absolute.
    func workingDirectory(for task: RunTask) throws(TemplateError) -> String {
        try task.spec.cwd.map { template throws(TemplateError) in
            String.absolute(try template.rendered(in: folderContext(for: task), as: .path(key: "cwd")), in: configuration.pipelineDirectory)
        } ?? configuration.pipelineDirectory
    }

    /// Where a dynamic fan-out reads its list and checks its conditions, before any item exists: its
    /// folder, or the pipeline's when its `cwd` names `{{ item }}`, which only an item can fill.
    func fanOutDirectory(for task: RunTask) throws(TemplateError) -> String {
        try fanOutDirectory(for: task, workingDirectory: workingDirectory(for: task))
    }

    /// The same, given the task's folder, resolved already.
    private func fanOutDirectory(for task: RunTask, workingDirectory: @autoclosure () throws(TemplateError) -> String)
        throws(TemplateError) -> String {
        if task.item == nil, task.spec.cwd?.usesItem == true { return configuration.pipelineDirectory }
        return try workingDirectory()
    }

    /// A shell command run on behalf of a task (a hook, a condition), in its folder and environment,
    /// writing to its log after what is already there.
    /// - Parameter attempt: the task's attempt the command follows (a hook's is the last), for `JOBGRAPH_ATTEMPT`.
    func commandWork(_ command: String, for task: RunTask, logName: String? = nil, attempt: Int = 1) throws(TemplateError) -> TaskWork {
        TaskWork(id: task.id, attempt: attempt, work: .shell(commands: [command], concurrently: false),
                 workingDirectory: try workingDirectory(for: task), environment: try environment(for: task, attempt: attempt),
                 niceness: task.qos?.niceness ?? 0, timeout: task.spec.timeout,
                 logPath: logPath(for: TaskID(logName ?? task.id.rawValue)), appendsToLog: true)
    }

    /// The pipeline's own hook: in the pipeline's folder and environment, with no task's settings.
    func hookWork(_ hook: PipelineHook) -> TaskWork {
        TaskWork(id: hook.id, attempt: 1, work: .shell(commands: [hook.command], concurrently: false),
                 workingDirectory: configuration.pipelineDirectory, environment: hookEnvironment, niceness: 0, timeout: nil,
                 logPath: logPath(for: hook.id), appendsToLog: true)
    }

    func work(for task: RunTask, attempt: Int) throws(TemplateError) -> TaskWork {
        try resolved(task, own: ownVariables(of: task), attempt: attempt, logPath: logPath(for: task.id)).work
    }

    /// The work of the task's first attempt, without a log path, its declared paths as `declaredPaths`
    /// gives them, and `environmentNames(for:)`: what the check before the run needs, each template
    /// rendered once and the task's variables found once.
    ///
    /// Why not `work(for:)`, `declaredPaths(for:)` and `environmentNames(for:)`: together they rendered the
    /// task's `inputs` and `outputs` twice, and its folder three times, and built a log path no check reads
    /// (callgrind, checked no-op rerun of 10,000 tasks); and they scanned its commands for the variables
    /// they name twice (perf record, the same rerun: 1% of its CPU). A template that does not render
    /// throws the error `work(for:)` would: it renders everything `declaredPaths` does, first.
    func checkedWork(for task: RunTask) throws(TemplateError)
        -> (work: TaskWork, inputs: [String], outputs: [String], environmentNames: [String]) {
        let own = ownVariables(of: task)
        let resolved = try resolved(task, own: own, attempt: 1, logPath: "")
        return (resolved.work, resolved.inputs, resolved.outputs, environmentNames(for: task, own: own))
    }

    /// - Parameter own: `ownVariables(of: task)`.
    private func resolved(_ task: RunTask, own: [(name: String, value: String)], attempt: Int, logPath: String) throws(TemplateError)
        -> (work: TaskWork, inputs: [String], outputs: [String]) {
        let spec = task.spec
        let environment = try environment(for: task, adding: own, attempt: attempt)
        let directory = try workingDirectory(for: task)
        var context = TemplateContext(variables: templateVariables(for: task), item: task.item, index: task.itemIndex, pipelineDirectory: configuration.pipelineDirectory,
                                      workingDirectory: try fanOutDirectory(for: task, workingDirectory: directory))
        // Only commands, `env` and hooks may name the attempt (the decoder sees to it), so the paths
        // rendered here are the same for every attempt.
        context.attempt = attempt
        let paths = try declaredPaths(of: spec, in: context)
        // What this attempt holds: a retry's `retry_scale` may have changed it (docs/pipeline.md, "Retries").
        let cpus = min(spec.resources(attempt: attempt)?.cpus ?? 1, max(configuration.jobs, 1))
        let work: TaskWork.Work
        var processLimit: Int?
        switch paths.step {
        case .commands(let commands, let concurrently):
            work = .shell(commands: try commands.map { command throws(TemplateError) in try command.rendered(in: context, as: .shellQuoted) },
                          concurrently: concurrently)
            // The Plan gave a parallel task this many `--jobs` slots (its weight, `cpus` a process); more
            // processes would exceed them.
            if concurrently { processLimit = max(1, min(commands.count, configuration.jobs / cpus)) }
        case .download(let download, let destination):
            let url = try download.url.rendered(in: context)
            work = .download(url: url, destination: String.absolute(destination, in: directory), sha256: download.sha256, maxBytes: download.maxBytes)
        case .filter(let filter, let input, let output):
            work = .filter(FilterWork(input: String.absolute(input, in: directory), output: String.absolute(output, in: directory), spec: filter))
        }
        var taskWork = TaskWork(
            id: task.id, attempt: attempt, work: work, workingDirectory: directory, environment: environment,
            niceness: task.qos?.niceness ?? 0, timeout: spec.timeout.map { timeout in spec.retryScale?.time(timeout, attempt: attempt) ?? timeout },
            logPath: logPath, processLimit: processLimit,
            sharedEnvironment: spec.environment.isEmpty && own.isEmpty ? baseEnvironmentBlock : nil)
        taskWork.isInteractive = spec.isInteractive
        taskWork.cpus = cpus
        // Asked before the first attempt only: a retry repeats what was agreed to.
        taskWork.prompt = configuration.answersPrompts || attempt > 1 ? nil : spec.prompt
        return (taskWork, paths.inputs, paths.outputs)
    }

    /// The task's `inputs` and `outputs`, rendered (a value may not leave the pipeline's folder), plus
    /// what a download or filter step reads and writes.
    func declaredPaths(for task: RunTask) throws(TemplateError) -> (inputs: [String], outputs: [String]) {
        let paths = try declaredPaths(of: task.spec, in: context(for: task))
        return (paths.inputs, paths.outputs)
    }

    /// A task's declared paths, rendered in `context`, with its step: its commands as written, or a
    /// download's or filter's paths, which count among the declared ones.
    private struct DeclaredPaths {
        enum Step {
            case commands([Template], concurrently: Bool)
            case download(DownloadSpec, destination: String)
            case filter(FilterSpec, input: String, output: String)
        }
        var inputs: [String]
        var outputs: [String]
        var step: Step
    }

    /// The one place that renders a task's paths, for its start and for the checks alike, so that the two
    /// cannot disagree on what a task reads and writes.
    private func declaredPaths(of spec: TaskSpec, in context: TemplateContext) throws(TemplateError) -> DeclaredPaths {
        // The run does not read `inputs` and `outputs` itself, but a value that would send them outside
        // the pipeline's folder fails the task all the same (contract: "A value substituted into a path").
        var inputs = try spec.inputs.map { template throws(TemplateError) in try template.rendered(in: context, as: .path(key: "inputs")) }
        var outputs = try spec.outputs.map { template throws(TemplateError) in try template.rendered(in: context, as: .path(key: "outputs")) }
        let step: DeclaredPaths.Step
        switch spec.action {
        case .run(let commands):
            step = .commands(commands, concurrently: false)
        case .parallel(let commands):
            step = .commands(commands, concurrently: true)
        case .download(let download):
            let destination = try download.destination.rendered(in: context, as: .path(key: "to"))
            outputs.append(destination)
            step = .download(download, destination: destination)
        case .filter(let filter):
            let input = try filter.input.rendered(in: context, as: .path(key: "input"))
            let output = try filter.output.rendered(in: context, as: .path(key: "output"))
            inputs.append(input)
            outputs.append(output)
            step = .filter(filter, input: input, output: output)
        }
        return DeclaredPaths(inputs: inputs, outputs: outputs, step: step)
    }

    /// The absolute path of a dynamic fan-out's list (`foreach: {from:}`), and the path as the file gives it.
    func fanOutList(for task: RunTask) throws(TemplateError) -> (path: String, shown: String)? {
        guard case .file(let source)? = task.spec.foreach else { return nil }
        let shown = try source.rendered(in: context(for: task), as: .path(key: "foreach.from"))
        return (String.absolute(shown, in: try fanOutDirectory(for: task)), shown)
    }

    /// The names of the variables the pipeline sets for a task: its part of the task's definition. A var
    /// the task neither uses nor exports is not among them, so `--var` on it reruns nothing (issue 35, bug 5).
    func environmentNames(for task: RunTask) -> [String] {
        environmentNames(for: task, own: ownVariables(of: task))
    }

    /// - Parameter own: `ownVariables(of: task)`.
    private func environmentNames(for task: RunTask, own: [(name: String, value: String)]) -> [String] {
        graph.pipeline.environment.map(\.name) + graph.pipeline.exportedVariables + own.map(\.name) + task.spec.environment.map(\.name)
    }

    /// `.jobgraph/logs/<task>.log`, with characters that cannot be in a file name replaced.
    func logPath(for id: TaskID) -> String {
        // Mapping the characters of every id, and joining four strings, cost 7,000 instructions a task
        // (callgrind, no-op rerun): the folder is joined once, in `init`.
        let isPlain = !id.rawValue.utf8.contains { $0 == UInt8(ascii: "/") || $0 == 0 }
        var path = logFolder
        path += isPlain ? id.rawValue : String(id.rawValue.map { $0 == "/" || $0 == "\0" ? "_" : $0 })
        path += ".log"
        return path
    }
}
