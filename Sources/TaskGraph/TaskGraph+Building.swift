import JobGraphBasics
import PipelineModel

extension TaskGraph {
    /// Expands static fan-outs, turns `needs` into edges and checks that the needs form no cycle.
    ///
    /// A static `foreach: [a, b]` on task `make` becomes nodes `make[a]` and `make[b]` where `make` stands
    /// in the file, each with `make`'s needs; naming `make` in `needs` means all of its items. A dynamic
    /// `foreach: {from:}` task stays one node, marked, until its list is read at run time. Runs in time
    /// linear in tasks plus needs, without recursion.
    /// - Parameters:
    ///   - pipeline: a pipeline the loader accepted (it has already checked each `needs` name on its own).
    ///   - listedItems: per task (its position in `pipeline.tasks`), the items of its `from:` list when
    ///     they were read before the run: the task then has nodes `id[0]`, `id[1]` … at once.
    ///   - diagnostics: receives every problem that needs the whole graph, cycles above all.
    /// - Returns: the graph, or `nil` when any error was found.
    public static func build(_ pipeline: Pipeline, listedItems: [Int: [ForeachItem]] = [:], diagnostics: inout Diagnostics) -> TaskGraph? {
        var problems = Diagnostics()
        let expansion = Expansion(pipeline.tasks, taskIndex: pipeline.taskIndex, listedItems: listedItems, diagnostics: &problems)
        let (dependencies, edgeNeeds) = expansion.resolveNeeds(diagnostics: &problems)
        guard !problems.hasErrors else {
            diagnostics.append(contentsOf: problems)
            return nil
        }
        let dependents = dependencies.reversed()
        let order = kahnOrder(dependencies: dependencies, dependents: dependents)
        if order.count < expansion.nodes.count {
            var finder = CycleFinder(nodes: expansion.nodes, dependencies: dependencies, edgeNeeds: edgeNeeds)
            finder.reportCycles(excluding: order, diagnostics: &problems)
        }
        diagnostics.append(contentsOf: problems)
        guard !problems.hasErrors else { return nil }
        return TaskGraph(
            pipeline: pipeline, nodes: expansion.nodes, dependencies: dependencies, edgeNeeds: edgeNeeds,
            dependents: dependents, topologicalOrder: order, names: expansion.names)
    }
}

extension TaskGraph {
    /// Reports the cycles among the needs of a pipeline with other mistakes: needs that name no task, or
    /// the task itself, are left out (the loader reported them), and so is every other problem `build` finds.
    static func reportCycles(amongKnownNeedsOf pipeline: Pipeline, diagnostics: inout Diagnostics) {
        var pipeline = pipeline
        let ids = Set(pipeline.tasks.map(\.id.rawValue))
        func isKnown(_ need: TaskID, of task: TaskID) -> Bool {
            guard need != task else { return false }
            var name = need.rawValue
            if let open = name.firstIndex(of: "["), name.last == "]" { name = String(name[..<open]) }
            return ids.contains(name)
        }
        for index in pipeline.tasks.indices where pipeline.tasks[index].needs.contains(where: { !isKnown($0.value, of: pipeline.tasks[index].id) }) {
            let id = pipeline.tasks[index].id
            pipeline.tasks[index].needs.removeAll { !isKnown($0.value, of: id) }
        }
        var ignored = Diagnostics()
        let expansion = Expansion(pipeline.tasks, taskIndex: nil, diagnostics: &ignored)
        let (dependencies, edgeNeeds) = expansion.resolveNeeds(diagnostics: &ignored)
        let order = kahnOrder(dependencies: dependencies, dependents: dependencies.reversed())
        guard order.count < expansion.nodes.count else { return }
        var finder = CycleFinder(nodes: expansion.nodes, dependencies: dependencies, edgeNeeds: edgeNeeds)
        finder.reportCycles(excluding: order, diagnostics: &diagnostics)
    }
}

/// The nodes of a pipeline in expanded file order, with the lookups that resolve `needs` names.
private struct Expansion {
    let tasks: [TaskSpec]
    /// The loader's table of ids and resolved needs; `nil` for a pipeline made another way.
    let taskIndex: TaskIndex?
    /// The `from:` lists read before the run, by task (see `TaskGraph.build`).
    let listedItems: [Int: [ForeachItem]]
    private(set) var nodes: [TaskNode] = []
    private(set) var names: NodeNames
    /// For each entry of `tasks`, the nodes made from it (empty for a duplicate or an empty fan-out).
    private var nodesOfTask: [Range<Int>] = []

    /// Expands every task of `tasks`, in file order.
    init(_ tasks: [TaskSpec], taskIndex: TaskIndex?, listedItems: [Int: [ForeachItem]] = [:], diagnostics: inout Diagnostics) {
        self.tasks = tasks
        self.taskIndex = taskIndex
        self.listedItems = listedItems
        nodes.reserveCapacity(tasks.count)
        nodesOfTask.reserveCapacity(tasks.count)
        names = NodeNames(capacity: tasks.count, taskIndex: taskIndex)
        for taskIndex in tasks.indices { add(taskIndex, diagnostics: &diagnostics) }
    }

    private mutating func add(_ taskIndex: Int, diagnostics: inout Diagnostics) {
        // Fields are read through `tasks[taskIndex]`, since binding the whole spec would copy all of it.
        let id = tasks[taskIndex].id
        let start = nodes.count
        defer { nodesOfTask.append(start..<nodes.count) }
        // The loader's table already holds each id once.
        guard self.taskIndex != nil || !names.contains(id) else {
            diagnostics.error("duplicate task '\(id)'", at: tasks[taskIndex].location)
            return
        }
        switch tasks[taskIndex].foreach {
        case .items(let items)?:
            for (position, item) in items.enumerated() {
                let itemID = id.item(item.value)
                guard !names.contains(itemID) else {
                    diagnostics.error("duplicate item '\(item.value)' in foreach of task '\(id)'", at: item.location)
                    continue
                }
                names.addItem(itemID, node: nodes.count)
                nodes.append(TaskNode(
                    id: itemID, index: nodes.count, specs: tasks, specIndex: taskIndex,
                    item: ForeachItem(value: item.value, index: position, location: item.location)))
            }
        case .file?:
            guard let items = listedItems[taskIndex] else {
                nodes.append(TaskNode(id: id, index: nodes.count, specs: tasks, specIndex: taskIndex, isDynamicFanOut: true))
                break
            }
            // Named by position, as the items a run reads are.
            for item in items {
                let itemID = id.item(String(item.index))
                names.addItem(itemID, node: nodes.count)
                nodes.append(TaskNode(id: itemID, index: nodes.count, specs: tasks, specIndex: taskIndex, item: item))
            }
        case nil:
            nodes.append(TaskNode(id: id, index: nodes.count, specs: tasks, specIndex: taskIndex))
        }
        names.addTask(id, nodes: start..<nodes.count)
    }

    /// Each node's edges, from its task's `needs` in order, with the position in `needs` of the entry
    /// behind each edge; an edge named twice (`needs: [make, make[a]]`) is kept once, at its first entry.
    func resolveNeeds(diagnostics: inout Diagnostics) -> (dependencies: AdjacencyLists, edgeNeeds: [Int32]) {
        let needCount = tasks.indices.reduce(0) { $0 + tasks[$1].needs.count }
        var dependencies = AdjacencyBuilder(nodeCapacity: nodes.count, edgeCapacity: needCount)
        var edgeNeeds: [Int32] = []
        edgeNeeds.reserveCapacity(needCount)
        // lastAddedBy[d] == n means node n already has an edge to d: a constant-time duplicate check,
        // valid because each node's edges are all added before the next node's.
        var lastAddedBy = [Int32](repeating: -1, count: nodes.count)
        // A task's needs, resolved once for all of its items; the buffer is reused from task to task.
        var resolved: [(targets: Range<Int>, need: Int32)] = []
        // Position of the current `needs` entry among all tasks' entries, as `TaskIndex.needTargets` counts.
        var flatNeed = 0
        for taskIndex in tasks.indices {
            resolved.removeAll(keepingCapacity: true)
            let itemNeeds = tasks[taskIndex].itemNeeds
            for (position, need) in tasks[taskIndex].needs.enumerated() {
                defer { flatNeed += 1 }
                if !itemNeeds.isEmpty, itemNeeds[position] != nil { continue }
                if let known = self.taskIndex?.needTargets[flatNeed], known >= 0, let targets = names.nodes(ofTaskAt: Int(known)) {
                    resolved.append((targets, Int32(position)))
                    continue
                }
                guard let targets = names.nodes(named: need.value) else {
                    // Only the item id of a dynamic fan-out gets here from a loaded file: it is unknown until run time.
                    let hint = Suggestion.hint(for: need.value.rawValue, in: TaskGraph.nameCandidates(in: nodes))
                    diagnostics.error(
                        "task '\(tasks[taskIndex].id)' needs unknown task '\(need.value)'\(hint)", at: need.location)
                    continue
                }
                resolved.append((targets, Int32(position)))
            }
            for node in nodesOfTask[taskIndex] {
                for (targets, need) in resolved {
                    for target in targets where lastAddedBy[target] != Int32(node) {
                        lastAddedBy[target] = Int32(node)
                        dependencies.append(target)
                        edgeNeeds.append(need)
                    }
                }
                for (position, template) in itemNeeds.sorted(by: { $0.key < $1.key }) {
                    guard let target = itemNeed(template, of: node, diagnostics: &diagnostics) else { continue }
                    for target in target where lastAddedBy[target] != Int32(node) {
                        lastAddedBy[target] = Int32(node)
                        dependencies.append(target)
                        edgeNeeds.append(Int32(position))
                    }
                }
                dependencies.endNode()
            }
        }
        return (dependencies.build(), edgeNeeds)
    }

    /// The nodes a per-item need (`map[{{ index }}]`) names for the item of `node`; `nil`, reported, when
    /// it names none or the node itself. Where the items are not known before the run, the edge is to
    /// what the need can name (docs/pipeline.md, "Per-item chains"): a fan-out whose items are read at run
    /// time has no item to render the need for, so it gets an edge to every node of the task the need's
    /// text begins with (`map`), if any; an item whose need names an item of such a fan-out gets an edge
    /// to that fan-out. The run resolves both once the items are read (see `TaskGraph.runNeeds`).
    private func itemNeed(_ template: Template, of node: Int, diagnostics: inout Diagnostics) -> Range<Int>? {
        let id = nodes[node].id
        guard let item = nodes[node].item else {
            guard let base = TaskGraph.namedTask(template), let targets = names.nodes(named: TaskID(base)),
                  !targets.contains(node) else { return nil }
            return targets
        }
        let name: String
        switch TaskGraph.renderedNeed(template, item: item) {
        case .success(let rendered): name = rendered
        case .failure(let problem):
            diagnostics.error("item '\(id)' \(problem.message) for its need '\(template)'", at: template.location)
            return nil
        }
        guard let targets = names.nodes(named: TaskID(name)) else {
            if let fanOut = TaskGraph.dynamicFanOut(namedBy: name, in: nodes, names: names) { return fanOut..<(fanOut + 1) }
            let hint = Suggestion.hint(for: name, in: TaskGraph.nameCandidates(in: nodes))
            diagnostics.error("item '\(id)' needs unknown task '\(name)' (from '\(template)')\(hint)", at: template.location)
            return nil
        }
        guard !targets.contains(node) else {
            diagnostics.error("item '\(id)' needs itself through '\(template)'; a per-item need names another task's item", at: template.location)
            return nil
        }
        return targets
    }
}

extension TaskGraph {
    /// Why a per-item need gives no name for an item.
    public struct ItemNeedProblem: Error, Sendable {
        /// What is wrong, to follow the item's id: `has no field 'name'`.
        public var message: String
    }

    /// A per-item need's text for one item: `{{ item }}`, `{{ item.field }}` and `{{ index }}` filled in.
    public static func renderedNeed(_ template: Template, item: ForeachItem) -> Result<String, ItemNeedProblem> {
        var name = ""
        for segment in template.segments {
            switch segment {
            case .literal(let text): name += text
            case .variable(let path, _) where path == ["index"]: name += String(item.index)
            case .variable(let path, _) where path.count == 2:
                guard let value = item.fields?[path[1]] else { return .failure(ItemNeedProblem(message: "has no field '\(path[1])'")) }
                name += value
            case .variable: name += item.value
            }
        }
        return .success(name)
    }

    /// The task a per-item need names whatever the item: the text before its first `[` when no
    /// placeholder comes before it (`map` in `map[{{ index }}]`).
    static func namedTask(_ template: Template) -> String? {
        guard case .literal(let text)? = template.segments.first, let open = text.firstIndex(of: "["), open > text.startIndex else { return nil }
        return String(text[..<open])
    }

    /// The node of the fan-out whose items are read at run time that `name` (`task[…]`) names an item of.
    static func dynamicFanOut(namedBy name: String, in nodes: [TaskNode], names: NodeNames) -> Int? {
        guard let open = name.firstIndex(of: "["), let range = names.nodes(named: TaskID(String(name[..<open]))),
              range.count == 1, nodes[range.lowerBound].isDynamicFanOut else { return nil }
        return range.lowerBound
    }

    /// Whether any task has a per-item need.
    public var hasItemNeeds: Bool { pipeline.tasks.contains { !$0.itemNeeds.isEmpty } }

    /// What a run makes of the edges of `node` (docs/pipeline.md, "Per-item chains"):
    /// - `needs`: the nodes it waits for to end;
    /// - `lists`: the fan-outs whose items its per-item needs name, read at run time: it waits for their
    ///   lists to be read, then for the items its needs name.
    ///
    /// An edge a per-item need made from a fan-out read at run time to a node known before the run is
    /// neither: each item gets its own need once the list is read.
    public func runNeeds(ofNode node: Int) -> (needs: [Int], lists: [Int]) {
        let itemNeeds = nodes[node].spec.itemNeeds
        guard !itemNeeds.isEmpty else { return (Array(dependencies[node]), []) }
        var needs: [Int] = [], lists: [Int] = []
        let first = dependencies.firstEdge(of: node)
        for (edge, target) in dependencies[node].enumerated() {
            let code = Int(edgeNeeds[first + edge])
            guard code >= 0, itemNeeds[code] != nil else {
                needs.append(target)
                continue
            }
            if nodes[target].isDynamicFanOut {
                lists.append(target)
            } else if !nodes[node].isDynamicFanOut {
                needs.append(target)
            }
        }
        return (needs, lists)
    }

    /// The per-item needs of `node`'s task, in `needs` order, each rendered for `item`.
    public func itemNeedNames(ofNode node: Int, item: ForeachItem) -> [(template: Template, name: Result<String, ItemNeedProblem>)] {
        nodes[node].spec.itemNeeds.sorted { $0.key < $1.key }.map { ($0.value, Self.renderedNeed($0.value, item: item)) }
    }
}
