import JobGraphBasics
import PipelineModel
import TaskGraph

/// Per-item needs resolved once a list is read at run time (docs/pipeline.md, "Per-item chains"): the
/// needs of the items of a fan-out read at run time, and the needs of the tasks that waited for its list.
///
/// A value made under the runner's lock for one list; the Plan's numbering: graph nodes first, then the
/// items the lists read so far added.
struct RunItemNeeds {
    let graph: TaskGraph
    /// Per fan-out read so far (its graph node), the Plan's indices of its items.
    let listed: [Int: Range<Int>]
    /// The fan-out whose list was just read (a graph node).
    let group: Int
    /// Where the Plan numbers the group's items from.
    let first: Int
    let itemCount: Int
    /// The graph nodes that depend on `group`, by any path: an item that needed one would wait for
    /// itself. Filled when first asked for.
    private var descendants: [Bool]?

    init(graph: TaskGraph, listed: [Int: Range<Int>], group: Int, first: Int, itemCount: Int) {
        self.graph = graph
        self.listed = listed
        self.group = group
        self.first = first
        self.itemCount = itemCount
    }

    /// The needs of item `number` of the group (`id`): every per-item need of the group's task, rendered
    /// for the item; or, when one names no task or item it may wait for, why, with its place.
    mutating func needs(ofItem item: ForeachItem, id: TaskID) -> Result<[Int], ItemNeedFailure> {
        var needs: [Int] = []
        for (template, rendered) in graph.itemNeedNames(ofNode: group, item: item) {
            let name: String
            switch rendered {
            case .success(let text): name = text
            case .failure(let problem): return .failure(ItemNeedFailure("item '\(id)' \(problem.message) for its need '\(template)'", at: template))
            }
            if let nodes = graph.indices(named: name) {
                var waitsForGroup = nodes.contains(group)
                for node in nodes where !waitsForGroup { waitsForGroup = isDescendant(node) }
                if waitsForGroup {
                    return .failure(ItemNeedFailure(
                        "item '\(id)' needs '\(name)' (from '\(template)'), which waits for '\(graph.nodes[group].id)' itself", at: template))
                }
                needs += nodes
                continue
            }
            switch itemOfList(name, forItemOfGroup: true) {
            case .item(let index)?: needs.append(index)
            case .problem(let message)?: return .failure(ItemNeedFailure("item '\(id)' needs '\(name)' (from '\(template)'): \(message)", at: template))
            case nil: return .failure(ItemNeedFailure("item '\(id)' needs unknown task '\(name)' (from '\(template)')", at: template))
            }
        }
        return .success(needs)
    }

    /// The needs among the group's items of a task known before the run (an item of a list) that waited
    /// for the group's list: those of its per-item needs that name the group's items.
    func needs(ofWaiter node: Int) -> Result<[Int], ItemNeedFailure> {
        guard let item = graph.nodes[node].item else { return .success([]) }
        var needs: [Int] = []
        let groupID = graph.nodes[group].id.rawValue
        for (template, rendered) in graph.itemNeedNames(ofNode: node, item: item) {
            guard case .success(let name) = rendered, name.hasPrefix(groupID + "["), graph.indices(named: name) == nil else { continue }
            switch itemOfList(name, forItemOfGroup: false) {
            case .item(let index)?: needs.append(index)
            case .problem(let message)?:
                return .failure(ItemNeedFailure("item '\(graph.nodes[node].id)' needs '\(name)' (from '\(template)'): \(message)", at: template))
            case nil: continue
            }
        }
        return .success(needs)
    }

    private enum ListItem {
        case item(Int)
        case problem(String)
    }

    /// What `task[k]` names when `task` is a fan-out read at run time: its item `k`, once its list is read.
    /// An item of the group names no item of the group: they are added together, with no order among them.
    private func itemOfList(_ name: String, forItemOfGroup: Bool) -> ListItem? {
        guard let open = name.firstIndex(of: "["), name.last == "]", let fanOut = graph.index(of: TaskID(String(name[..<open]))),
              graph.nodes[fanOut].isDynamicFanOut else { return nil }
        let key = name[name.index(after: open)..<name.index(before: name.endIndex)]
        if fanOut == group && forItemOfGroup {
            return .problem("a per-item need names another task's item, not one of its own fan-out")
        }
        let items: Range<Int>
        if fanOut == group {
            items = first..<(first + itemCount)
        } else if let read = listed[fanOut] {
            items = read
        } else {
            return .problem("the list of '\(graph.nodes[fanOut].id)' is not read yet")
        }
        guard let position = Int(key), position >= 0, position < items.count else {
            return .problem("'\(graph.nodes[fanOut].id)' has \(String(counting: items.count, "item")), numbered from 0")
        }
        return .item(items.lowerBound + position)
    }

    private mutating func isDescendant(_ node: Int) -> Bool {
        if descendants == nil {
            var found = [Bool](repeating: false, count: graph.nodes.count)
            var stack = [group]
            while let next = stack.popLast() {
                for dependent in graph.dependents[next] where !found[dependent] {
                    found[dependent] = true
                    stack.append(dependent)
                }
            }
            descendants = found
        }
        return descendants?[node] ?? false
    }
}

/// A per-item need that named no task at run time: the item fails with this reason (its place first).
struct ItemNeedFailure: Error {
    var reason: String

    init(_ message: String, at template: Template) {
        reason = "\(template.location): \(message)"
    }
}

extension ForeachItem {
    /// An item read from a `from:` list, at position `index` (0-based); `location` is where `from` is.
    init(_ value: ItemValue, index: Int, location: SourceLocation) {
        switch value {
        case .string(let text): self.init(value: text, index: index, location: location)
        case .object(let fields): self.init(value: "", index: index, location: location, fields: fields)
        }
    }
}
