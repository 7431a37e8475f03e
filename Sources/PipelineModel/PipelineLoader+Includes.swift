#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import JobGraphBasics

/// `include:` (docs/pipeline.md, "Includes"): each included file is loaded as a pipeline of its own, then
/// its tasks join the including file's under `NAME:`, with their needs, aliases, queues and variables
/// renamed to match, and their folder set to the included file's.
extension PipelineLoader {
    /// A file on the chain of includes being loaded: its real path (to find a cycle) and its path as shown.
    struct IncludeLink {
        var realPath: String
        var shown: String
    }

    /// Loads the files `pipeline` includes, recursively, and adds their tasks; then checks the names
    /// with a `:` that `pipeline`'s own tasks and `default:` give, which only the included tasks can match.
    /// - Parameter chain: the files whose includes are being loaded, outermost first, ending with `pipeline`'s.
    static func resolveIncludes(
        _ pipeline: inout Pipeline, chain: [IncludeLink], variableCommands: VariableCommandRunner?, diagnostics: inout Diagnostics
    ) {
        guard !pipeline.includes.isEmpty else {
            checkNamespacedNames(in: pipeline, ownTaskCount: pipeline.tasks.count, unchecked: [], diagnostics: &diagnostics)
            return
        }
        let ownTaskCount = pipeline.tasks.count
        let folder = directory(of: pipeline.file)
        var values: [String: String] = [:]
        for variable in pipeline.variables { values[variable.name] = variable.value }
        // Namespaces whose file had an error: names into them are not reported again as unknown.
        var failed: Set<String> = []
        var tasks = pipeline.tasks
        for include in pipeline.includes {
            if let task = tasks.prefix(ownTaskCount).first(where: { $0.id.rawValue == include.name }) {
                diagnostics.error(
                    "include '\(include.name)' has the name of task '\(include.name)' (line \(task.location.line)); naming it on the command line would be ambiguous, so rename one",
                    at: include.location)
                failed.insert(include.name)
                continue
            }
            let namespace = include.name + ":"
            var clashed = false
            for task in tasks.prefix(ownTaskCount) where task.id.rawValue.hasPrefix(namespace) {
                diagnostics.error(
                    "task id '\(task.id.rawValue)' is in the names of include '\(include.name)' (line \(include.location.line)); rename the task or the include",
                    at: task.location)
                clashed = true
            }
            if clashed {
                failed.insert(include.name)
                continue
            }
            let path = include.file.value.hasPrefix("/") ? include.file.value : joined(folder, include.file.value)
            guard let real = realPath(path) else {
                diagnostics.error(
                    "cannot read included file '\(path)': \(String(cString: strerror(errno)))", at: include.file.location)
                failed.insert(include.name)
                continue
            }
            var status = stat()
            guard stat(real, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
                // A device or a pipe could be read forever.
                diagnostics.error("included file '\(path)' is not a regular file", at: include.file.location)
                failed.insert(include.name)
                continue
            }
            if let start = chain.firstIndex(where: { $0.realPath == real }) {
                let files = chain[start...].map(\.shown) + [path]
                diagnostics.error(
                    "include '\(include.name)' makes a cycle of includes: \(files.joined(separator: " -> ")); a file cannot include itself, directly or not",
                    at: include.location)
                failed.insert(include.name)
                continue
            }
            var overrides: [String: String] = [:]
            var locations: [String: SourceLocation] = [:]
            for variable in include.variables {
                overrides[variable.name] = rendered(variable.value, values: values)
                locations[variable.name] = variable.location
            }
            let inclusion = Inclusion(name: include.name, file: path, variableLocations: locations, location: include.file.location)
            guard let child = loadIncluded(
                path, overrides: overrides, variableCommands: variableCommands, inclusion: inclusion,
                chain: chain + [IncludeLink(realPath: real, shown: path)],
                diagnostics: &diagnostics)
            else {
                failed.insert(include.name)
                continue
            }
            merge(child, as: include, into: &pipeline, tasks: &tasks)
        }
        pipeline.tasks = tasks
        checkNamespacedNames(in: pipeline, ownTaskCount: ownTaskCount, unchecked: failed, diagnostics: &diagnostics)
    }

    /// Reads and decodes an included file, and its own includes; `nil` when it had an error.
    private static func loadIncluded(
        _ path: String, overrides: [String: String], variableCommands: VariableCommandRunner?, inclusion: Inclusion,
        chain: [IncludeLink], diagnostics: inout Diagnostics
    ) -> Pipeline? {
        let bytes: [UInt8]
        switch readFile(path) {
        case .success(let read): bytes = read
        case .failure(let reason):
            diagnostics.error("cannot read included file '\(path)': \(reason.message)", at: inclusion.location)
            return nil
        }
        var problems = Diagnostics()
        let pipeline = load(
            bytes, file: path, variableOverrides: overrides, variableCommands: variableCommands, inclusion: inclusion, chain: chain,
            diagnostics: &problems)
        diagnostics.append(contentsOf: problems)
        return problems.hasErrors ? nil : pipeline
    }

    /// Adds the tasks of `child` to `tasks` under the include's name, and its variables, queues and goals to `pipeline`.
    private static func merge(_ child: Pipeline, as include: Include, into pipeline: inout Pipeline, tasks: inout [TaskSpec]) {
        let namespace = include.name
        func qualified(_ name: String) -> String { namespace + ":" + name }
        // The included tasks' folder, relative to the including file's folder.
        let folder = include.directory ?? directory(of: include.file.value)
        // The included file's variables live on in `pipeline` as `NAME:VAR`, which no file can write, so
        // templates keep quoting their values at run time; each included task also gets them in its
        // environment under their own names, as the file alone would give them.
        let childVariables = Set(child.variables.map(\.name))
        func renamed(_ template: Template) -> Template {
            guard !template.isLiteral, !childVariables.isEmpty else { return template }
            var template = template
            template.segments = template.segments.map { segment in
                guard case .variable(var path, let location) = segment, childVariables.contains(path[0]) else { return segment }
                path[0] = qualified(path[0])
                return .variable(path: path, location: location)
            }
            return template
        }
        let fileEnvironment = child.variables.filter { !$0.name.contains(":") }.map { variable in
            EnvironmentEntry(name: variable.name, value: Template(literal: variable.value, location: variable.location ?? include.location))
        } + child.environment.map { EnvironmentEntry(name: $0.name, value: renamed($0.value)) }

        tasks.reserveCapacity(tasks.count + child.tasks.count)
        for var task in child.tasks {
            task.id = task.id.namespaced(in: namespace)
            task.needs = task.needs.map { Located($0.value.namespaced(in: namespace), at: $0.location) }
            if !task.aliases.isEmpty { task.aliases = task.aliases.map { Located($0.value.namespaced(in: namespace), at: $0.location) } }
            if let queue = task.queue { task.queue = Located(QueueName(qualified(queue.value.rawValue)), at: queue.location) }
            if !childVariables.isEmpty { task.renameTemplates(renamed) }
            if folder != "." && folder != "" {
                if let cwd = task.cwd {
                    if !(cwd.literalText?.hasPrefix("/") ?? false) {
                        var joinedCWD = cwd
                        joinedCWD.segments = [.literal(folder + "/")] + cwd.segments
                        task.cwd = joinedCWD
                    }
                } else {
                    task.cwd = Template(literal: folder, location: include.file.location)
                }
            }
            if !fileEnvironment.isEmpty { task.environment = fileEnvironment + task.environment }
            tasks.append(task)
        }
        pipeline.variables += child.variables.map { Variable(name: qualified($0.name), value: $0.value, location: $0.location) }
        pipeline.queues += child.queues.map { queue in
            var queue = queue
            queue.name = QueueName(qualified(queue.name.rawValue))
            return queue
        }
        let goal = child.defaultTasks?.map(\.value) ?? child.tasks.filter { !$0.isManual && !$0.isInternal }.map(\.id)
        pipeline.includedGoals[namespace] = goal.map { $0.namespaced(in: namespace) }
        for (name, ids) in child.includedGoals { pipeline.includedGoals[qualified(name)] = ids.map { $0.namespaced(in: namespace) } }
    }

    /// Reports names with a `:` in the file's own `needs` and `default:` that name no included task
    /// (`PipelineChecks` leaves them for this, as the included tasks are not known there).
    /// - Parameter unchecked: includes that failed to load, whose names are not reported again.
    private static func checkNamespacedNames(
        in pipeline: Pipeline, ownTaskCount: Int, unchecked: Set<String>, diagnostics: inout Diagnostics
    ) {
        guard !pipeline.namespacedReferences.isEmpty else { return }
        let known = Set(pipeline.tasks[ownTaskCount...].map(\.id.rawValue))
        for reference in pipeline.namespacedReferences {
            let name = reference.name, key = reference.key
            var text = name.value.rawValue
            if let open = text.firstIndex(of: "["), text.last == "]" { text = String(text[..<open]) }
            guard !known.contains(text), !unchecked.contains(where: { text.hasPrefix($0 + ":") }) else { continue }
            let hint = Suggestion.closest(to: name.value.rawValue, in: known.sorted()).map { "; did you mean '\($0)'?" } ?? "; no task has that id"
            diagnostics.error("unknown task '\(name.value.rawValue)' in '\(key)'\(hint)", at: name.location)
        }
    }

    /// The template with its variables replaced by `values`, plainly: an include's `vars` value.
    private static func rendered(_ template: Template, values: [String: String]) -> String {
        template.segments.map { segment in
            switch segment {
            case .literal(let text): text
            case .variable(let path, _): values[path[0]] ?? ""
            }
        }.joined()
    }

    /// The folder of a path as typed: `website` for `website/jobgraph.yaml`, `.` for `jobgraph.yaml`.
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `name` under `folder`, leaving out a folder of `.`, so messages show paths as the user would type them.
    private static func joined(_ folder: String, _ name: String) -> String {
        folder == "." ? name : String(joining: folder, name)
    }

    /// The canonical path of an existing file, or `nil` with `errno` set.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

extension TaskSpec {
    /// Applies `transform` to every template of the task: its action's, paths, folder, environment,
    /// conditions, fan-out source, hooks and service check.
    mutating func renameTemplates(_ transform: (Template) -> Template) {
        switch action {
        case .run(let commands): action = .run(commands.map(transform))
        case .parallel(let commands): action = .parallel(commands.map(transform))
        case .download(var download):
            download.url = transform(download.url)
            download.destination = transform(download.destination)
            action = .download(download)
        case .filter(var filter):
            filter.input = transform(filter.input)
            filter.output = transform(filter.output)
            action = .filter(filter)
        }
        if !inputs.isEmpty { inputs = inputs.map(transform) }
        if !outputs.isEmpty { outputs = outputs.map(transform) }
        if let cwd { self.cwd = transform(cwd) }
        if !environment.isEmpty { environment = environment.map { EnvironmentEntry(name: $0.name, value: transform($0.value)) } }
        if !conditions.isEmpty { conditions = conditions.map { $0.renamingTemplates(transform) } }
        if case .file(let source)? = foreach { foreach = .file(transform(source)) }
        if let onSuccess { self.onSuccess = transform(onSuccess) }
        if let onFailure { self.onFailure = transform(onFailure) }
        if let ready = service?.ready { service?.ready = ready.renamingTemplates(transform) }
    }
}

extension Condition {
    func renamingTemplates(_ transform: (Template) -> Template) -> Condition {
        switch self {
        case .fileExists(let path): .fileExists(transform(path))
        case .command(let command): .command(transform(command))
        case .environmentSet, .reachable, .platform: self
        }
    }
}
