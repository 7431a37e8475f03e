import JobGraphBasics
import YAMLNodes

extension TaskSpec {
    /// Every key a task (or `defaults`) may set, in the order messages list them.
    static let keys = KeySet([
        "description", "run", "parallel", "download", "filter", "needs", "queue", "priority", "qos", "cwd", "env",
        "timeout", "retries", "retry_delay", "when", "conditions", "exclusive", "inputs", "outputs", "foreach",
        "service", "on_success", "on_failure", "allow_failure", "slurm", "manual", "params", "aliases", "internal",
        "platforms", "interactive", "prompt", "retry_on", "retry_scale", "cache", "cache_env", "resources",
    ])

    /// One key of a task as it will be decoded: written in the task itself, or taken from `defaults`.
    struct Field {
        var key: String
        var entry: YAMLMappingEntry
        var isDefault: Bool
        /// The key as one bit, by its place in `TaskSpec.keys`, for cheap sets of keys.
        var bit: UInt64

        init(known: consuming KnownEntry, isDefault: Bool) {
            self.key = known.key
            self.entry = known.entry
            self.isDefault = isDefault
            self.bit = 1 << UInt64(known.index)
        }

        /// The bits of `run`, `parallel`, `download` and `filter`.
        static let actionBits: UInt64 = Action.keywords.reduce(0) { bits, key in
            bits | (TaskSpec.keys.index(of: key).map { 1 << UInt64($0) } ?? 0)
        }

        var isAction: Bool { bit & Self.actionBits != 0 }

        /// The bit of `foreach`, which is decoded before the other keys.
        static let foreachBit: UInt64 = TaskSpec.keys.index(of: "foreach").map { 1 << UInt64($0) } ?? 0
        /// The bit of `params`, decoded before the other keys too: its names are variables in the task's templates.
        static let paramsBit: UInt64 = TaskSpec.keys.index(of: "params").map { 1 << UInt64($0) } ?? 0
    }

    /// Decodes one task from its own fields and the `defaults` fields it did not set.
    ///
    /// Always returns a task, so cross-reference checks can still look at its `needs` and `queue`;
    /// whether it is usable is told by the errors added to `decoder`. A task with no action gets an
    /// empty `run`: it stands in for a task in error, and is the whole of a group's work.
    /// - Parameter fields: known keys only (unknown ones were reported by the caller).
    static func decode(id: String, idNode: YAMLNode, fields: [Field], decoder: inout NodeDecoder) -> TaskSpec {
        var task = TaskSpec(id: TaskID(id), location: idNode.location, action: .run([]))
        decodeFields(fields, into: &task, id: id, idNode: idNode, decoder: &decoder)
        return task
    }

    /// Sets `task`'s fields; a function of its own (taking the task `inout`) because, with the task a
    /// local of this long function, the optimizer copied the whole task in and out (callgrind:
    /// two TaskSpec copies and destroys per task).
    private static func decodeFields(
        _ fields: [Field], into task: inout TaskSpec, id: String, idNode: YAMLNode, decoder: inout NodeDecoder
    ) {
        func owner(_ field: Field) -> String { field.isDefault ? "'defaults'" : "task '\(id)'" }

        // `foreach` first: whether `{{ item }}` is defined in the other fields depends on it.
        var item = ItemScope.none
        // By index throughout: iterating `fields` (`for`, `firstIndex(where:)`) copies each field, two
        // nodes' worth of retains (callgrind: four field copies a task).
        if let field = fields.indices.first(where: { fields[$0].bit == Field.foreachBit }),
           fields[field].entry.value.scalar?.isNull != true {
            let value = fields[field].entry.value
            // Judge the shape even if the content is wrong, so one mistake does not cascade into
            // an "item is not defined" error at every use.
            item = value.sequence != nil ? .listed : .file
            task.foreach = Foreach.decode(value, owner: "'foreach' of \(owner(fields[field]))", decoder: &decoder)
        }

        // `params` next: its names are variables of this task's templates, shadowing `vars` of the same name.
        var pipelineVariables: [String]?
        if let field = fields.indices.first(where: { fields[$0].bit == Field.paramsBit }),
           fields[field].entry.value.scalar?.isNull != true {
            task.parameters = TaskParameter.decodeMapping(fields[field].entry.value, owner: owner(fields[field]), decoder: &decoder)
            if !task.parameters.isEmpty {
                pipelineVariables = decoder.variableNames
                decoder.declareVariables(decoder.variableNames + task.parameters.map(\.name).filter { !decoder.variableSet.contains($0) })
            }
        }
        defer { if let pipelineVariables { decoder.declareVariables(pipelineVariables) } }


        // Checked before the task's own conditions, whichever key comes first.
        var platforms: [String]?
        // The action and service are remembered by position, not copied.
        var actionIndex: Int?
        var serviceIndex: Int?
        var terminalIndex: Int?
        var cacheIndex: Int?
        for index in fields.indices where fields[index].bit != Field.foreachBit && fields[index].bit != Field.paramsBit {
            let key = fields[index].key, value = fields[index].entry.value, isDefault = fields[index].isDefault
            func owner() -> String { isDefault ? "'defaults'" : "task '\(id)'" }
            if fields[index].isAction {
                if let first = actionIndex {
                    decoder.error(
                        "\(owner()) has both '\(fields[first].key)' and '\(key)'; a task does exactly one thing",
                        at: fields[index].entry.key)
                    continue
                }
                actionIndex = index
                // Commands may name the attempt; a download's or filter's paths may not.
                decoder.allowsAttempt = key == "run" || key == "parallel"
                defer { decoder.allowsAttempt = false }
                if let action = Action.decode(keyword: key, value: value, owner: owner(), item: item, decoder: &decoder) {
                    task.action = action
                }
                continue
            }
            // Null means "not set", so a task can turn off a value it would take from `defaults`.
            if value.scalar?.isNull == true { continue }
            switch key {
            case "description":
                task.description = decoder.text(value, for: key)
            case "needs":
                task.needs = decodeNeeds(value, of: id, isDefault: isDefault, decoder: &decoder)
                task.itemNeeds = decodeItemNeeds(value, needs: task.needs, item: item, decoder: &decoder)
            case "queue":
                if let name = decoder.nonEmptyText(value, expected: "a queue name", for: key) {
                    task.queue = Located(QueueName(name), at: value.location)
                }
            case "priority":
                task.priority = decoder.choice(value, for: key, noun: "priority") ?? task.priority
            case "qos":
                task.qos = decoder.choice(value, for: key, noun: "qos")
            case "when":
                task.when = decoder.choice(value, for: key, noun: "'when' value") ?? task.when
            case "cwd":
                task.cwd = decoder.nonEmptyTemplate(value, expected: "a directory", for: key, item: item)
            case "env":
                decoder.allowsAttempt = true
                task.environment = EnvironmentEntry.decodeMapping(value, item: item, decoder: &decoder) ?? []
                decoder.allowsAttempt = false
            case "timeout":
                task.timeout = decoder.duration(value, for: key, positive: true)
            case "retries":
                task.retries = decoder.integer(value, for: key, in: 0...Int.max) ?? task.retries
            case "retry_delay":
                task.retryDelay = decoder.duration(value, for: key) ?? task.retryDelay
            case "retry_on":
                task.retryOn = decodeRetryOn(value, decoder: &decoder)
            case "retry_scale":
                task.retryScale = RetryScale.decode(value, owner: "'retry_scale' of \(owner())", decoder: &decoder)
            case "conditions":
                task.conditions = Condition.decodeList(value, item: item, decoder: &decoder) ?? []
            case "exclusive":
                let names = decoder.scalarList(value, expected: "a list of category names", for: key) ?? []
                task.exclusive = names.compactMap { $0.scalar?.text }
            case "inputs", "outputs":
                let paths = decoder.templateList(value, expected: "a list of paths or glob patterns", for: key, item: item, allowsEmpty: true) ?? []
                if key == "inputs" { task.inputs = paths } else { task.outputs = paths }
            case "service":
                serviceIndex = index
                task.service = ServiceSpec.decode(value, owner: "'service' of \(owner())", item: item, decoder: &decoder)
            case "on_success", "on_failure":
                decoder.allowsAttempt = true
                let hook = decoder.nonEmptyTemplate(value, expected: "a shell command", for: key, item: item)
                decoder.allowsAttempt = false
                if key == "on_success" { task.onSuccess = hook } else { task.onFailure = hook }
            case "allow_failure":
                task.allowFailure = decoder.bool(value, for: key) ?? false
            case "manual":
                task.isManual = decoder.bool(value, for: key) ?? false
            case "internal":
                task.isInternal = decoder.bool(value, for: key) ?? false
            case "aliases":
                task.aliases = decodeAliases(value, decoder: &decoder)
            case "platforms":
                platforms = decodePlatforms(value, decoder: &decoder)
            case "interactive":
                task.isInteractive = decoder.bool(value, for: key) ?? false
                if task.isInteractive { terminalIndex = index }
            case "prompt":
                task.prompt = decoder.nonEmptyText(value, expected: "a question", for: key)
                if task.prompt != nil { terminalIndex = terminalIndex ?? index }
            case "slurm":
                task.slurm = SlurmSpec.decode(value, level: isDefault ? .defaults : .task(id), decoder: &decoder)
            case "cache":
                task.isCached = decoder.bool(value, for: key) ?? false
                cacheIndex = task.isCached ? index : nil
            case "cache_env":
                task.cacheEnvironment = decodeCacheEnvironment(value, decoder: &decoder)
            case "resources":
                task.resources = Resources.decode(value, level: isDefault ? .defaults : .task(id), decoder: &decoder)
            default:
                break
            }
        }

        if let cacheIndex { checkCache(&task, field: fields[cacheIndex], decoder: &decoder) }
        if let resources = task.resources, let slurm = task.slurm { checkSlurmResources(resources, slurm, id: id, decoder: &decoder) }
        if let platforms { task.conditions.insert(.platform(platforms), at: 0) }
        // A task with needs and no action is a group, as make's `all: a b` and just's `all: a b` are: its
        // empty `run` succeeds once the needs are done.
        if actionIndex == nil, task.needs.isEmpty || serviceIndex != nil {
            decoder.error(
                "task '\(id)' has no action; give it one of \(Suggestion.list(Action.keywords)), or 'needs' to make it a group of tasks",
                at: idNode)
        } else if let serviceIndex, let actionIndex, fields[actionIndex].key != "run" {
            decoder.error("'service' needs a task with 'run', not '\(fields[actionIndex].key)'", at: fields[serviceIndex].entry.key)
        } else if task.isInteractive, let terminalIndex, let actionIndex, fields[actionIndex].key != "run" {
            // One command at a time can have the terminal's foreground.
            decoder.error("'interactive' needs a task with 'run', not '\(fields[actionIndex].key)'", at: fields[terminalIndex].entry.key)
        } else if let terminalIndex, serviceIndex != nil {
            // A service runs beside the tasks that need it, and an interactive task runs alone.
            decoder.error("a service cannot be '\(fields[terminalIndex].key)': it runs beside the tasks that need it, "
                          + "and a task that uses the terminal runs alone", at: fields[terminalIndex].entry.key)
        }
    }

    /// `resources` feed the task's Slurm request (docs/pipeline.md, "Resources"); the same amount given in
    /// the task's own `slurm:` too would leave two answers, so it is an error at the `resources` entry.
    private static func checkSlurmResources(_ resources: Resources, _ slurm: SlurmSpec, id: String, decoder: inout NodeDecoder) {
        for amount in resources.amounts {
            let isTwice = switch amount.name {
            case Resources.cpus: slurm.cpus != nil
            case Resources.memory: slurm.mem != nil
            default: false
            }
            guard isTwice, let location = amount.location else { continue }
            decoder.diagnostics.error(
                "'\(amount.name)' of task '\(id)' is given in both 'resources' and 'slurm'; give it once, in 'resources', which Slurm takes too",
                at: location)
        }
    }

    /// Contract (docs/cache.md, "What can be cached"): a task's own `cache: true` on a task without
    /// `outputs`, on a service or on a task with `conditions` is an error at that key; from `defaults` it
    /// just leaves such a task uncached.
    private static func checkCache(_ task: inout TaskSpec, field: Field, decoder: inout NodeDecoder) {
        let obstacle: String? = if task.outputs.isEmpty {
            "it has no 'outputs' to restore"
        } else if task.service != nil {
            "a service runs beside the tasks that need it and leaves nothing to restore"
        } else if !task.conditions.isEmpty {
            "its 'conditions' decide at run time whether it runs"
        } else if task.isInteractive || task.prompt != nil {
            "it uses the terminal"
        } else {
            nil
        }
        guard let obstacle else { return }
        task.isCached = false
        if !field.isDefault {
            decoder.error("task '\(task.id.rawValue)' cannot be cached: \(obstacle); remove 'cache: true'", at: field.entry.key)
        }
    }

    /// `cache_env:`, a list of environment variable names.
    private static func decodeCacheEnvironment(_ node: YAMLNode, decoder: inout NodeDecoder) -> [String] {
        guard let names = decoder.scalarList(node, expected: "a list of environment variable names", for: "cache_env") else { return [] }
        var result: [String] = []
        for name in names {
            guard let text = name.scalar?.text else { continue }
            guard !text.isEmpty, !text.contains("="), !text.contains(where: { $0 == "\0" || $0.isWhitespace }) else {
                decoder.error("invalid environment variable name '\(NodeDecoder.shortened(text))' in 'cache_env'", at: name)
                continue
            }
            if !result.contains(text) { result.append(text) }
        }
        return result
    }

    /// `aliases:`, a list of names such as ids; clashes are checked once every task is known.
    private static func decodeAliases(_ node: YAMLNode, decoder: inout NodeDecoder) -> [Located<TaskID>] {
        guard let names = decoder.scalarList(node, expected: "a list of names", for: "aliases") else { return [] }
        var aliases: [Located<TaskID>] = []
        for name in names {
            guard let text = name.scalar?.text else { continue }
            guard TaskID.isValid(text) else {
                decoder.error(
                    "invalid alias '\(NodeDecoder.shortened(text))'; use letters, digits, '-', '_' and '.', with ':' between parts", at: name)
                continue
            }
            aliases.append(Located(TaskID(text), at: name.location))
        }
        return aliases
    }

    /// `platforms:`, a list of `Platform.names`; `nil` when an entry is not one.
    private static func decodePlatforms(_ node: YAMLNode, decoder: inout NodeDecoder) -> [String]? {
        guard let names = decoder.scalarList(node, expected: "a list of platforms such as 'linux' or 'darwin/arm64'", for: "platforms")
        else { return nil }
        var platforms: [String] = []
        var isValid = true
        for name in names {
            guard let text = name.scalar?.text else { continue }
            guard Platform.names.contains(text) else {
                let advice = Suggestion.closest(to: text, in: Platform.names).map { "; did you mean '\($0)'?" }
                    ?? "; use \(Suggestion.list(Platform.systems + Platform.architectures)), or 'os/arch' such as 'linux/arm64'"
                decoder.error("unknown platform '\(NodeDecoder.shortened(text))'\(advice)", at: name)
                isValid = false
                continue
            }
            platforms.append(text)
        }
        if isValid && platforms.isEmpty {
            decoder.error("'platforms' is empty; list at least one platform, or leave the key out", at: node)
            return nil
        }
        return isValid ? platforms : nil
    }

    /// `needs:` as located ids; a `defaults` entry naming the task itself is dropped for that task,
    /// so `defaults: {needs: [setup]}` does not make `setup` wait for itself.
    /// The entries of `needs` with a `{{`, parsed: they may name only the item (`{{ item }}`,
    /// `{{ item.field }}`) and its position (`{{ index }}`), in a task with `foreach`.
    private static func decodeItemNeeds(
        _ node: YAMLNode, needs: [Located<TaskID>], item: ItemScope, decoder: inout NodeDecoder
    ) -> [Int: Template] {
        guard needs.contains(where: { $0.value.rawValue.utf8.contains(UInt8(ascii: "{")) }), let entries = node.sequence else { return [:] }
        var templates: [Int: Template] = [:]
        for (position, need) in needs.enumerated() where need.value.rawValue.contains("{{") {
            if case .none = item {
                decoder.diagnostics.error("only a task with 'foreach' can have a need that names its item; write the task's id", at: need.location)
                continue
            }
            guard let entry = entries.first(where: { $0.location == need.location }),
                  let template = TemplateParser.parse(need.value.rawValue, in: entry, item: item, decoder: &decoder) else { continue }
            if let name = template.variableNames.first(where: { $0 != "item" && $0 != "index" }) {
                decoder.diagnostics.error(
                    "a need may name only the fan-out's item ({{ item }}, {{ item.field }}) and its position ({{ index }}), not '\(name)'",
                    at: need.location)
                continue
            }
            templates[position] = template
        }
        return templates
    }

    private static func decodeNeeds(_ node: YAMLNode, of id: String, isDefault: Bool, decoder: inout NodeDecoder) -> [Located<TaskID>] {
        let names: [YAMLNode]
        if case .sequence(let items) = node.content, items.allSatisfy(NodeDecoder.isText) {
            // The usual list of ids is read in place; `scalarList` copies it and reports the unusual.
            names = items
        } else {
            guard let checked = decoder.scalarList(node, expected: "a list of task ids", for: "needs") else { return [] }
            names = checked
        }
        var needs: [Located<TaskID>] = []
        needs.reserveCapacity(names.count)
        // Most tasks need a few others: a linear scan beats hashing until the list grows long.
        var seen = names.count > 16 ? Set<String>() : nil
        for name in names {
            guard let text = name.scalar?.text else { continue }
            if seen != nil {
                guard seen?.insert(text).inserted == true else { continue }
            } else if needs.contains(where: { $0.value.rawValue == text }) {
                continue
            }
            if isDefault && text == id { continue }
            needs.append(Located(TaskID(text), at: name.location))
        }
        return needs
    }
}

extension Foreach {
    static let keys = KeySet(["from"])

    /// `foreach: [a, b]` or `foreach: {from: PATH}` (contract: "fan-out").
    static func decode(_ node: YAMLNode, owner: String, decoder: inout NodeDecoder) -> Foreach? {
        if let list = node.sequence {
            guard !list.isEmpty else {
                decoder.error("'foreach' is empty; list at least one item", at: node)
                return nil
            }
            var items: [Located<String>] = []
            items.reserveCapacity(list.count)
            var firstSeen: [String: SourceLocation] = [:]
            var isValid = true
            for element in list {
                guard let scalar = element.scalar, !scalar.isNull else {
                    let hint = element.mapping != nil ? "; for items with fields, use 'foreach: {from: FILE}'" : ""
                    decoder.error("expected a string for each item of 'foreach', found \(NodeDecoder.found(element))\(hint)", at: element)
                    isValid = false
                    continue
                }
                let text = scalar.text
                if text.isEmpty || text.contains(where: { $0 == "[" || $0 == "]" || $0.isNewline }) {
                    decoder.error(
                        "foreach item '\(NodeDecoder.shortened(text))' cannot be part of a task id; use a non-empty item without '[', ']' or line breaks",
                        at: element)
                    isValid = false
                    continue
                }
                if let first = firstSeen[text] {
                    decoder.error(
                        "duplicate item '\(NodeDecoder.shortened(text))' in 'foreach' (first at line \(first.line), column \(first.column)); each item names a task, so items must be unique",
                        at: element)
                    isValid = false
                    continue
                }
                firstSeen[text] = element.location
                items.append(Located(text, at: element.location))
            }
            return isValid ? .items(items) : nil
        }
        guard let entries = node.mapping else {
            let hint = node.scalar.map { "; for a single item write '[\(NodeDecoder.shortened($0.text))]'" } ?? ""
            decoder.error(
                "expected a list of items or a mapping '{from: FILE}' for 'foreach', found \(NodeDecoder.found(node))\(hint)", at: node)
            return nil
        }
        let known = decoder.knownEntries(entries, allowed: keys, in: owner)
        guard let from = known.first(where: { $0.key == "from" }) else {
            if known.count == entries.count {
                decoder.error("missing 'from' in \(owner); give the file to read the items from", at: node)
            }
            return nil
        }
        let source = decoder.nonEmptyTemplate(from.entry.value, expected: "a path", for: "from", item: .foreachSource)
        return known.count == entries.count ? source.map(Foreach.file) : nil
    }
}

extension ServiceSpec {
    static let keys = KeySet(["ready", "timeout"])

    /// `service: {ready: CONDITION, timeout: DURATION}`.
    static func decode(_ node: YAMLNode, owner: String, item: ItemScope, decoder: inout NodeDecoder) -> ServiceSpec? {
        guard let entries = decoder.mapping(node, expected: "a mapping with 'ready' and 'timeout'", for: "service") else { return nil }
        var service = ServiceSpec()
        var isValid = true
        let known = decoder.knownEntries(entries, allowed: keys, in: owner)
        if known.count != entries.count { isValid = false }
        for known in known where known.entry.value.scalar?.isNull != true {
            let entry = known.entry
            if known.key == "timeout" {
                service.timeout = decoder.duration(entry.value, for: "timeout", positive: true)
                if service.timeout == nil { isValid = false }
                continue
            }
            guard let readyEntries = entry.value.mapping else {
                decoder.error(
                    "expected a condition such as '{reachable: 127.0.0.1:8080}' for 'ready', found \(NodeDecoder.found(entry.value))",
                    at: entry.value)
                isValid = false
                continue
            }
            service.ready = Condition.decode(
                readyEntries, at: entry.value, allowed: Condition.readyKeys, owner: "'ready' of \(owner)", item: item, decoder: &decoder)
            if service.ready == nil { isValid = false }
        }
        return isValid ? service : nil
    }
}
