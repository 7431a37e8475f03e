import JobGraphBasics

/// Checks what one part of the file says about another: `queue` and `needs` must name something declared.
///
/// Cycles longer than a task needing itself are the task graph's to find.
enum PipelineChecks {
    /// Past this many unknown names, messages stop offering a near match: finding one scans every task.
    static let suggestionBudget = 100

    /// - Parameters:
    ///   - declaredTaskIDs: every id under `tasks`, including tasks that failed to decode.
    ///   - indexByID: the same ids as a table, so no second one is built.
    /// - Returns: each `needs` entry's position in `declaredTaskIDs`, task by task (-1 when unknown), and
    ///   the names with a `:`, left for `PipelineLoader.resolveIncludes` to check.
    static func check(
        _ pipeline: Pipeline, declaredTaskIDs: [String], indexByID: [String: Int], diagnostics: inout Diagnostics
    ) -> (needTargets: [Int32], namespaced: [NamespacedReference]) {
        var namespaced: [NamespacedReference] = []
        var needTargets: [Int32] = []
        needTargets.reserveCapacity(pipeline.tasks.indices.reduce(0) { $0 + pipeline.tasks[$1].needs.count })
        let queueNames = pipeline.queues.map(\.name.rawValue)
        let declaredQueues = Set(queueNames)
        var suggestionsLeft = suggestionBudget

        func hint(for word: String, in candidates: [String]) -> String? {
            guard suggestionsLeft > 0 else { return nil }
            suggestionsLeft -= 1
            return Suggestion.closest(to: word, in: candidates)
        }

        // Indices, not `for task in`: copying each task out of the array costs a retain per field.
        for index in pipeline.tasks.indices {
            if let queue = pipeline.tasks[index].queue, !declaredQueues.contains(queue.value.rawValue) {
                let name = queue.value.rawValue
                let advice: String
                if queueNames.isEmpty {
                    advice = "; declare it under 'queues'"
                } else if let near = hint(for: name, in: queueNames) {
                    advice = "; did you mean '\(near)'?"
                } else {
                    advice = "; declare it under 'queues' or use \(Suggestion.list(queueNames))"
                }
                diagnostics.error("unknown queue '\(name)'\(advice)", at: queue.location)
            }
            let id = pipeline.tasks[index].id
            for need in pipeline.tasks[index].needs {
                let name = need.value.rawValue
                let target = indexByID[name]
                needTargets.append(target.map { Int32($0) } ?? -1)
                if need.value == id {
                    diagnostics.error("task '\(name)' needs itself; remove it from its 'needs'", at: need.location)
                } else if target == nil, let open = name.firstIndex(of: "["), name.last == "]", indexByID[String(name[..<open])] != nil {
                    // One item of a fan-out, `make[a]`: the task graph, which knows the items, resolves it.
                    continue
                } else if target == nil, name.contains("{{") {
                    // A per-item need (`map[{{ index }}]`): the task graph renders it for each item. Only the
                    // task it names, when written out, can be checked here.
                    guard let open = name.firstIndex(of: "["), !name[..<open].contains("{") else { continue }
                    let base = String(name[..<open])
                    let advice = hint(for: base, in: declaredTaskIDs).map { "; did you mean '\($0)'?" } ?? "; no task has that id"
                    diagnostics.error("unknown task '\(base)' in 'needs'\(advice)", at: need.location)
                } else if target == nil, name.utf8.contains(UInt8(ascii: ":")) {
                    // An included task (`web:build`): checked once the includes are loaded.
                    namespaced.append(NamespacedReference(name: need, key: "needs"))
                    continue
                } else if target == nil {
                    let advice = hint(for: name, in: declaredTaskIDs).map { "; did you mean '\($0)'?" } ?? "; no task has that id"
                    diagnostics.error("unknown task '\(name)' in 'needs'\(advice)", at: need.location)
                }
            }
        }
        checkAliases(pipeline, indexByID: indexByID, diagnostics: &diagnostics)
        for name in pipeline.defaultTasks ?? [] {
            guard let position = indexByID[name.value.rawValue], position < pipeline.tasks.count,
                  pipeline.tasks[position].id == name.value, pipeline.tasks[position].isInternal else { continue }
            diagnostics.error(
                "task '\(name.value.rawValue)' in 'default' is internal; it runs only when a task that runs needs it", at: name.location)
        }
        for name in pipeline.defaultTasks ?? [] where indexByID[name.value.rawValue] == nil {
            if name.value.rawValue.contains(":") {
                namespaced.append(NamespacedReference(name: name, key: "default"))
                continue
            }
            let advice = hint(for: name.value.rawValue, in: declaredTaskIDs).map { "; did you mean '\($0)'?" } ?? "; no task has that id"
            diagnostics.error("unknown task '\(name.value.rawValue)' in 'default'\(advice)", at: name.location)
        }
        return (needTargets, namespaced)
    }

    /// Each alias must differ from every task id and every other alias: a command-line name means one task.
    private static func checkAliases(_ pipeline: Pipeline, indexByID: [String: Int], diagnostics: inout Diagnostics) {
        var owners: [String: (task: TaskID, location: SourceLocation)] = [:]
        for index in pipeline.tasks.indices where !pipeline.tasks[index].aliases.isEmpty {
            let task = pipeline.tasks[index].id
            for alias in pipeline.tasks[index].aliases {
                let name = alias.value.rawValue
                if let other = indexByID[name] {
                    let what = other < pipeline.tasks.count && pipeline.tasks[other].id.rawValue == name
                        ? "the id of task '\(name)' (line \(pipeline.tasks[other].location.line))" : "the id of a task"
                    diagnostics.error("alias '\(name)' of task '\(task)' is already \(what); choose another alias", at: alias.location)
                } else if let first = owners[name] {
                    let whose = first.task == task ? "another alias of the same task" : "an alias of task '\(first.task)'"
                    diagnostics.error(
                        "alias '\(name)' of task '\(task)' is already \(whose) (line \(first.location.line)); choose another alias",
                        at: alias.location)
                } else {
                    owners[name] = (task, alias.location)
                }
            }
        }
    }
}
