import JobGraphBasics
import YAMLNodes

extension Pipeline {
    /// The top-level keys, in the order messages list them (contract: "The pipeline file").
    static let keys = KeySet(["version", "name", "vars", "env", "queues", "defaults", "tasks", "on_success", "on_failure", "output", "executor", "slurm", "default", "include", "export", "cache_dir", "remote_cache", "resources"])
    /// Keys that set up the whole run, which only the file that is run may set (docs/pipeline.md, "Includes").
    static let runKeys: Set<String> = ["output", "executor", "slurm", "on_success", "on_failure", "cache_dir", "remote_cache", "resources"]

    /// Decodes a whole document, reporting every problem to `decoder`.
    ///
    /// Cross-references (`needs`, `queue`) are checked here too, against every task id the file
    /// declares, so a task with a mistake of its own is still a valid target.
    /// - Returns: the pipeline as far as it could be decoded; usable only when no error was added.
    /// - Parameter streamed: what a `TaskStream` decoded while the file was read (`vars`, `defaults`
    ///   and the tasks); those keys are then not decoded again.
    static func decode(
        _ root: YAMLNode, file: String, variableOverrides: [String: String], variableCommands: VariableCommandRunner? = nil,
        streamed: TaskStream? = nil, decoder: inout NodeDecoder
    ) -> Pipeline {
        var pipeline = Pipeline(file: file)
        guard let entries = root.mapping else {
            decoder.error(
                "expected a mapping with 'version' and 'tasks' at the top of the file, found \(NodeDecoder.found(root))", at: root)
            return pipeline
        }
        var values: [String: YAMLMappingEntry] = [:]
        for known in decoder.knownEntries(entries, allowed: keys, in: nil, keyNoun: "top-level key") {
            if let inclusion = decoder.inclusion, runKeys.contains(known.key) {
                decoder.error(
                    "'\(known.key)' applies to the whole run, so only the file that is run may set it; remove it from this file, which include '\(inclusion.name)' reads",
                    at: known.entry.key)
                continue
            }
            values[known.key] = known.entry
        }
        // A misspelt `tasks:` is already reported as an unknown key with the right spelling; saying
        // that `tasks` is missing as well would only repeat it.
        let misspelt = Set(entries.compactMap { entry in
            entry.keyText.flatMap { keys.contains($0) ? nil : Suggestion.closest(to: $0, in: keys.ordered) }
        })

        if let version = values["version"] {
            if let scalar = version.value.scalar, !scalar.isNull {
                if scalar.text != "1" {
                    decoder.error("unsupported version '\(NodeDecoder.shortened(scalar.text))'; the only version is 1", at: version.value)
                }
            } else {
                decoder.error("expected 'version: 1', found \(NodeDecoder.found(version.value))", at: version.value)
            }
        } else if !misspelt.contains("version") {
            decoder.error("missing 'version'; the only version is 1", at: root)
        }
        if let name = values["name"], name.value.scalar?.isNull != true {
            pipeline.name = decoder.text(name.value, for: "name")
        }

        // Variables first: every template below is checked against them.
        if let streamed {
            pipeline.variables = streamed.variables
        } else {
            pipeline.variables = decodeVariables(
                values["vars"]?.value, overrides: variableOverrides, commands: variableCommands, decoder: &decoder)
            decoder.declareVariables(pipeline.variables.map(\.name))
        }
        if let entry = values["export"], entry.value.scalar?.isNull != true {
            pipeline.exportedVariables = decodeExports(entry.value, variables: pipeline.variables, decoder: &decoder)
        }
        if let env = values["env"], env.value.scalar?.isNull != true {
            pipeline.environment = EnvironmentEntry.decodeMapping(env.value, item: .none, decoder: &decoder) ?? []
        }
        if let queues = values["queues"], queues.value.scalar?.isNull != true {
            pipeline.queues = QueueSpec.decodeMapping(queues.value, decoder: &decoder)
        }
        let defaults = streamed?.defaults ?? decodeDefaults(values["defaults"], decoder: &decoder)
        var taskList = TaskListDecoder(defaults: [])
        if let streamed, streamed.entryCount > 0 {
            taskList = streamed.taskList
            pipeline.tasks = taskList.tasks
        } else if let tasks = values["tasks"] {
            taskList = decodeTasks(tasks.value, defaults: defaults, decoder: &decoder)
            pipeline.tasks = taskList.tasks
        } else if !misspelt.contains("tasks") {
            decoder.error("missing 'tasks'; a pipeline needs at least one task", at: root)
        }

        if let output = values["output"] { pipeline.output = decodeOutputMode(output.value, decoder: &decoder) }

        if let entry = values["default"], entry.value.scalar?.isNull != true { pipeline.defaultTasks = decodeDefaultTasks(entry.value, decoder: &decoder) }
        if let entry = values["include"], entry.value.scalar?.isNull != true { pipeline.includes = Include.decodeMapping(entry.value, decoder: &decoder) }
        decodeExecutor(values, into: &pipeline, decoder: &decoder)
        if let entry = values["resources"], entry.value.scalar?.isNull != true {
            pipeline.resources = Resources.decode(entry.value, level: .topLevel, decoder: &decoder)
        }
        if let entry = values["cache_dir"], entry.value.scalar?.isNull != true {
            pipeline.cacheDirectory = decoder.nonEmptyText(entry.value, expected: "a folder", for: "cache_dir")
        }
        if let entry = values["remote_cache"], entry.value.scalar?.isNull != true {
            pipeline.remoteCache = RemoteCacheSpec.decode(entry.value, decoder: &decoder)
        }
        for key in ["on_success", "on_failure"] {
            guard let entry = values[key], entry.value.scalar?.isNull != true else { continue }
            let hook = decoder.nonEmptyTemplate(entry.value, expected: "a shell command", for: key, item: .none)
            if key == "on_success" { pipeline.onSuccess = hook } else { pipeline.onFailure = hook }
        }

        let (needTargets, namespaced) = PipelineChecks.check(
            pipeline, declaredTaskIDs: taskList.declaredIDs, indexByID: taskList.indexByID, diagnostics: &decoder.diagnostics)
        pipeline.namespacedReferences = namespaced
        // Positions among declared ids are positions in `tasks` only when every task decoded.
        if taskList.declaredIDs.count == pipeline.tasks.count, !decoder.diagnostics.hasErrors {
            pipeline.keep(TaskIndex(positionByID: taskList.indexByID, needTargets: needTargets))
        }
        return pipeline
    }

    /// `default:`, a task id or a list of them; their existence is checked with the other cross-references.
    static func decodeDefaultTasks(_ node: YAMLNode, decoder: inout NodeDecoder) -> [Located<TaskID>]? {
        if node.mapping != nil {
            // `default:` with task keys below it is `defaults:` missing its 's'.
            decoder.error("expected a list of task ids for 'default', found a mapping; did you mean 'defaults'?", at: node)
            return nil
        }
        guard let names = decoder.scalarList(node, expected: "a list of task ids", for: "default") else { return nil }
        return names.compactMap { name in name.scalar.map { Located(TaskID($0.text), at: name.location) } }
    }

    /// `export:`, names of `vars` that every task's environment holds whether it uses them or not.
    static func decodeExports(_ node: YAMLNode, variables: [Variable], decoder: inout NodeDecoder) -> [String] {
        guard let names = decoder.scalarList(node, expected: "a list of variable names", for: "export") else { return [] }
        let declared = variables.map(\.name)
        var exported: [String] = []
        for name in names {
            guard let text = name.scalar?.text else { continue }
            guard declared.contains(text) else {
                let advice = Suggestion.closest(to: text, in: declared).map { "; did you mean '\($0)'?" }
                    ?? (declared.isEmpty ? "; the file declares no 'vars'" : "; declare it under 'vars'")
                decoder.error("unknown variable '\(NodeDecoder.shortened(text))' in 'export'\(advice)", at: name)
                continue
            }
            if !exported.contains(text) { exported.append(text) }
        }
        return exported
    }

    /// `defaults`: task keys every task takes unless it sets them itself.
    static func decodeDefaults(_ entry: YAMLMappingEntry?, decoder: inout NodeDecoder) -> [TaskSpec.Field] {
        guard let entry, entry.value.scalar?.isNull != true,
              let defaultEntries = decoder.mapping(entry.value, expected: "a mapping of task keys", for: "defaults")
        else { return [] }
        return decoder.knownEntries(defaultEntries, allowed: TaskSpec.keys, in: "'defaults'")
            .map { TaskSpec.Field(known: $0, isDefault: true) }
    }

    private static func decodeTasks(_ node: YAMLNode, defaults: [TaskSpec.Field], decoder: inout NodeDecoder) -> TaskListDecoder {
        var list = TaskListDecoder(defaults: defaults)
        if node.scalar?.isNull == true || node.mapping?.isEmpty == true || node.sequence?.isEmpty == true {
            decoder.error("'tasks' is empty; a pipeline needs at least one task", at: node)
            return list
        }
        guard let entries = node.mapping else {
            let hint = node.sequence != nil ? "; write each task as 'ID:' with its keys below, not as a '- ' list item" : ""
            decoder.error("expected a mapping of task ids to tasks for 'tasks', found \(NodeDecoder.found(node))\(hint)", at: node)
            return list
        }
        list = TaskListDecoder(defaults: defaults, expectedCount: entries.count)
        for entry in entries { list.add(entry, decoder: &decoder) }
        return list
    }

    /// `vars`, then `--var` overrides: a known name takes the new value; an unknown one is an error (a
    /// misspelt `--var` silently set nothing, and as an exported variable made every task rerun).
    /// - Parameter commands: runs each `{sh: COMMAND}` once, in the order references need; `nil` runs none.
    static func decodeVariables(
        _ node: YAMLNode?, overrides: [String: String], commands: VariableCommandRunner? = nil, decoder: inout NodeDecoder
    ) -> [Variable] {
        var variables: [Variable] = []
        // The value nodes of the variables (a command's for `sh`), to parse those with a placeholder once
        // every name is known.
        var valueNodes: [YAMLNode?] = []
        if let node, node.scalar?.isNull != true, let entries = decoder.mapping(node, expected: "a mapping of names to values", for: "vars") {
            for entry in entries {
                guard let name = entry.keyText, entry.key.scalar != nil else {
                    decoder.error("expected a variable name, found \(NodeDecoder.found(entry.key))", at: entry.key)
                    continue
                }
                if let problem = Variable.nameProblem(name) {
                    decoder.error(problem, at: entry.key)
                    continue
                }
                if let fields = entry.value.mapping {
                    guard let command = decodeCommand(fields, at: entry.value, of: name, decoder: &decoder) else { continue }
                    variables.append(Variable(name: name, value: "", location: entry.key.location, command: command.text))
                    valueNodes.append(command.node)
                    continue
                }
                guard let value = scalarText(entry.value, describedAs: "variable '\(name)'", decoder: &decoder) else { continue }
                variables.append(Variable(name: name, value: value, location: entry.key.location))
                valueNodes.append(entry.value)
            }
        }
        var indexByName: [String: Int] = [:]
        for (index, variable) in variables.enumerated() { indexByName[variable.name] = index }
        for name in overrides.keys.sorted() {
            guard let value = overrides[name] else { continue }
            if let problem = Variable.nameProblem(name) {
                decoder.diagnostics.error("\(problem) (given with '--var')", at: nil)
                continue
            }
            if let index = indexByName[name] {
                variables[index].value = value
                variables[index].command = nil
                valueNodes[index] = nil
            } else {
                let declared = variables.map(\.name)
                let advice = declared.isEmpty ? "; the file declares no 'vars'"
                    : Suggestion.closest(to: name, in: declared).map { "; did you mean '\($0)'?" }
                        ?? "; declare it under 'vars', or use \(Suggestion.list(declared))"
                if let inclusion = decoder.inclusion {
                    decoder.diagnostics.error(
                        "include '\(inclusion.name)' sets variable '\(name)', which '\(inclusion.file)' does not declare\(advice)",
                        at: inclusion.variableLocations[name])
                } else {
                    decoder.diagnostics.error("unknown variable '\(NodeDecoder.shortened(name))' given with '--var'\(advice)", at: nil)
                }
            }
        }
        // A value may use other variables: parsed against every name, then substituted in reference order.
        guard variables.contains(where: { $0.command != nil }) || valueNodes.contains(where: { $0?.scalar?.text.contains("{{") == true })
        else { return variables }
        decoder.declareVariables(variables.map(\.name))
        let templates = zip(variables, valueNodes).map { variable, node -> Template? in
            guard let node, let text = variable.command ?? (variable.value.contains("{{") ? variable.value : nil) else { return nil }
            return TemplateParser.parse(text, in: node, item: .none, decoder: &decoder)
        }
        return Variable.resolvingReferences(variables, templates: templates, commands: commands, diagnostics: &decoder.diagnostics)
    }

    /// `{sh: COMMAND}`, a variable whose value a command prints: the command's text and node.
    private static func decodeCommand(
        _ fields: [YAMLMappingEntry], at node: YAMLNode, of name: String, decoder: inout NodeDecoder
    ) -> (text: String, node: YAMLNode)? {
        let known = decoder.knownEntries(fields, allowed: KeySet(["sh"]), in: "variable '\(name)'")
        guard known.count == fields.count else { return nil }
        guard let command = known.first else {
            decoder.error("expected '{sh: COMMAND}' for variable '\(name)', found an empty mapping", at: node)
            return nil
        }
        guard let text = decoder.nonEmptyText(command.entry.value, expected: "a shell command", for: "sh") else { return nil }
        return (text, command.entry.value)
    }

    /// A `vars` or `env` value: any scalar, as written (`NO` and `8080` alike); null or a collection is refused.
    static func scalarText(_ node: YAMLNode, describedAs what: String, decoder: inout NodeDecoder) -> String? {
        guard let scalar = node.scalar else {
            decoder.error("expected a string for \(what), found \(NodeDecoder.found(node))", at: node)
            return nil
        }
        if scalar.isNull {
            decoder.error("\(what) has no value; write '\"\"' for an empty string", at: node)
            return nil
        }
        return scalar.text
    }
}

extension Variable {
    /// Why `name` cannot be a variable (it is used in `{{ name }}` and exported to shells), or `nil`.
    /// - Parameter noun: what the name names, for the message (`variable`, `parameter`).
    static func nameProblem(_ name: String, noun: String = "variable") -> String? {
        if name == "item" { return "'item' is reserved for 'foreach' items; choose another \(noun) name" }
        if name == "attempt" { return "'attempt' is reserved for the attempt's number; choose another \(noun) name" }
        let scalars = name.unicodeScalars
        let isValid = scalars.first.map { $0.isASCII && ($0.properties.isAlphabetic || $0 == "_") } == true
            && scalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
        return isValid ? nil
            : "invalid \(noun) name '\(NodeDecoder.shortened(name))'; use letters, digits and '_', not starting with a digit"
    }
}

extension EnvironmentEntry {
    /// Whether `name` can be put in a process environment: not empty, no `=`, no NUL.
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && !name.contains("=") && !name.contains("\0")
    }

    /// An `env` mapping (pipeline or task); each value is a template, written as any scalar.
    static func decodeMapping(_ node: YAMLNode, item: ItemScope, decoder: inout NodeDecoder) -> [EnvironmentEntry]? {
        guard let entries = decoder.mapping(node, expected: "a mapping of names to values", for: "env") else { return nil }
        var environment: [EnvironmentEntry] = []
        environment.reserveCapacity(entries.count)
        var isValid = true
        for entry in entries {
            guard let name = entry.keyText, entry.key.scalar != nil, isValidName(name) else {
                decoder.error(
                    "invalid environment variable name \(NodeDecoder.found(entry.key)) in 'env'; it may not be empty or contain '='",
                    at: entry.key)
                isValid = false
                continue
            }
            guard let text = Pipeline.scalarText(entry.value, describedAs: "'\(name)' in 'env'", decoder: &decoder),
                  let value = TemplateParser.parse(text, in: entry.value, item: item, decoder: &decoder)
            else {
                isValid = false
                continue
            }
            environment.append(EnvironmentEntry(name: name, value: value))
        }
        return isValid ? environment : nil
    }
}

extension QueueSpec {
    static let keys = KeySet(["max_concurrent", "qos", "slurm"])

    /// `queues:`, a mapping of names to `{max_concurrent, qos}`; an empty value takes the defaults.
    static func decodeMapping(_ node: YAMLNode, decoder: inout NodeDecoder) -> [QueueSpec] {
        guard let entries = decoder.mapping(node, expected: "a mapping of queue names to queues", for: "queues") else { return [] }
        var queues: [QueueSpec] = []
        for entry in entries {
            guard let name = entry.keyText, entry.key.scalar != nil, !name.isEmpty else {
                decoder.error("expected a queue name, found \(NodeDecoder.found(entry.key))", at: entry.key)
                continue
            }
            var queue = QueueSpec(name: QueueName(name), location: entry.key.location)
            if entry.value.scalar?.isNull != true,
               let fields = decoder.mapping(entry.value, expected: "a mapping with 'max_concurrent' and 'qos'", for: name) {
                for known in decoder.knownEntries(fields, allowed: keys, in: "queue '\(name)'") where known.entry.value.scalar?.isNull != true {
                    if known.key == "qos" {
                        queue.qos = decoder.choice(known.entry.value, for: known.key, noun: "qos")
                    } else if known.key == "slurm" {
                        queue.slurm = SlurmSpec.decode(known.entry.value, level: .queue(name), decoder: &decoder)
                    } else {
                        queue.maxConcurrent = decoder.integer(known.entry.value, for: known.key, in: 1...Int.max)
                    }
                }
            }
            queues.append(queue)
        }
        return queues
    }
}
