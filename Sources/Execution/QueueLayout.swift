import PipelineModel
import TaskGraph

/// The run's queues: the implicit `default` queue (index 0) for tasks that name none, then the
/// pipeline's `queues` in file order, each with the limit it runs with.
public struct QueueLayout: Sendable {
    public let names: [String]
    /// Most tasks executing at once per queue: `max_concurrent` (else the CPU count), never above `jobs`.
    public let limits: [Int]
    /// For each graph node, the index of its queue.
    public let queueOfTask: [Int]

    public init(graph: TaskGraph, jobs: Int, processorCount: Int) {
        let declared = graph.pipeline.queues
        var indexByName: [QueueName: Int] = [:]
        for (offset, queue) in declared.enumerated() { indexByName[queue.name] = offset + 1 }
        names = ["default"] + declared.map(\.name.rawValue)
        limits = [jobs] + declared.map { min($0.maxConcurrent ?? processorCount, jobs) }
        queueOfTask = graph.nodes.map { node in node.spec.queue.flatMap { indexByName[$0.value] } ?? 0 }
    }
}

extension Plan {
    /// The Plan of a graph: its needs, `when` rules, priorities, remaining critical paths, conditions,
    /// exclusivity categories, parallel weights, services and dynamic fan-outs.
    /// - Parameter durations: expected seconds per node (from history); `nil` counts every task as 1.
    /// - Parameter resources: the run's totals (`RunConfiguration.resources`); a name without one is unlimited.
    public init(graph: TaskGraph, layout: QueueLayout, jobs: Int, keepGoing: Bool, durations: [Double]? = nil,
                resources: Resources = Resources()) {
        let limited = LimitedResources(totals: resources)
        let criticalPaths = durations.map { graph.criticalPathLengths(durations: $0) } ?? graph.criticalPathLengths()
        let categories = ExclusivityCategories(graph: graph)
        // Per task, the lists its per-item needs wait for, read at run time (docs/pipeline.md, "Per-item chains").
        var lists: [Int: [Int]] = [:]
        let hasItemNeeds = graph.hasItemNeeds
        // Each node read in place: binding it copied its whole TaskSpec, a retain and release per field
        // (perf, checked no-op rerun of 100,000 tasks: a quarter of the runner's setup).
        let tasks = graph.nodes.withUnsafeBufferPointer { nodes in
            nodes.indices.map { index in
                let isFanOut = nodes[index].isDynamicFanOut
                let needs: [Int]
                if hasItemNeeds && nodes[index].hasItemNeeds {
                    let resolved = graph.runNeeds(ofNode: index)
                    needs = resolved.needs
                    if !resolved.lists.isEmpty { lists[index] = resolved.lists }
                } else {
                    needs = Array(graph.dependencies[index])
                }
                return Plan.Task(id: nodes[index].id, queue: layout.queueOfTask[index], priority: nodes[index].spec.priority,
                                 criticalPath: criticalPaths[index], when: nodes[index].spec.when,
                                 allowsFailure: nodes[index].spec.allowFailure, needs: needs,
                                 hasConditions: nodes[index].spec.conditions.contains { !isFanOut || !$0.usesItem },
                                 categories: categories.indices(of: nodes[index].spec.exclusive),
                                 weight: nodes[index].spec.slotCount, isService: nodes[index].spec.service != nil, isFanOut: isFanOut,
                                 runsAlone: nodes[index].spec.runsAlone, demands: limited.demands(of: nodes[index].spec.resources).demands)
            }
        }
        self.init(tasks: tasks, jobs: jobs, queueLimits: layout.limits, categoryCount: categories.names.count, keepGoing: keepGoing,
                  resourceTotals: limited.totals)
        waitForLists(lists)
    }

    /// The order tasks would start if every task succeeded and took the same time, conditions held and
    /// services were ready at once: what `--dry-run` shows. A dynamic fan-out counts as one step.
    public func startOrder() -> [Int] {
        var plan = self
        var order: [Int] = []
        var running: [Int] = []
        var next = 0
        var transitions = plan.begin()
        repeat {
            var requests = plan.takeRequests()
            while !requests.isEmpty {
                for index in requests.checkConditions { transitions += plan.conditionsChecked(index, met: true) }
                for index in requests.expand {
                    order.append(index)
                    transitions += plan.expand(index, items: []).transitions
                }
                requests = plan.takeRequests()
            }
            let started = plan.take().started
            order += started
            running += started
            for index in started where plan.tasks[index].isService { transitions += plan.serviceReady(index) }
            guard next < running.count else { break }
            transitions += plan.record(running[next], .succeeded)
            next += 1
        } while true
        _ = transitions
        return order
    }
}

extension Condition {
    /// Whether the condition names `{{ item }}` or `{{ index }}`: in a dynamic fan-out, each item checks such a condition
    /// itself; the fan-out checks the others once, before it reads its list.
    public var usesItem: Bool {
        switch self {
        case .fileExists(let template), .command(let template): template.usesItem
        case .environmentSet, .reachable, .platform: false
        }
    }
}

/// The resources of a run that have a total (every one but `cpus`, whose total is `--jobs`), numbered for the Plan.
public struct LimitedResources: Sendable {
    public let names: [String]
    public let totals: [Int64]

    public init(totals: Resources) {
        let limited = totals.amounts.filter { $0.name != Resources.cpus }
        names = limited.map(\.name)
        self.totals = limited.map(\.value)
    }

    /// What a task with these `resources` holds of the limited ones, nothing of a name with no total, and
    /// each amount it asked for beyond its total.
    /// At most the total, as a task's slots are at most `--jobs`: the run refuses a task asking more before
    /// it starts, and one that got past (a file changed under `--watch`, a retry's `retry_scale`) must not
    /// wait for ever.
    func demands(of resources: Resources?) -> (demands: [Plan.Demand], beyondTotals: [Resources.Amount]) {
        guard let resources else { return ([], []) }
        var beyond: [Resources.Amount] = []
        let demands = resources.amounts.compactMap { amount -> Plan.Demand? in
            guard let index = names.firstIndex(of: amount.name) else { return nil }
            if amount.value > totals[index] { beyond.append(amount) }
            return Plan.Demand(resource: index, amount: min(amount.value, totals[index]))
        }
        return (demands, beyond)
    }

    /// What attempt `attempt` (1-based) of a task holds in the Plan: its slots and its demands, as
    /// `retry_scale` makes them for a retry (`TaskSpec.resources(attempt:)`, the rule Slurm's request follows
    /// too), each at most its total; and, for a retry that asks more than a total, what it holds instead
    /// (docs/pipeline.md, "Retries").
    public func holding(of spec: TaskSpec, attempt: Int, jobs: Int) -> Plan.Holding {
        let resources = spec.resources(attempt: attempt)
        let cpus = resources?.cpus ?? 1
        let (demands, beyond) = self.demands(of: resources)
        var notes: [String] = []
        // Only what a retry's scaling asked: a `parallel` group's slots above `--jobs` are held to it on
        // every attempt, as on the first, and a first attempt asking more than a total stopped the run.
        if attempt > 1 {
            let jobs = max(1, jobs), slots = spec.slotCount(cpus: cpus)
            if slots > jobs && slots != spec.slotCount {
                notes.append("asks cpus \(slots), more than the \(jobs) total: holds \(jobs)")
            }
            for amount in beyond where amount.value != spec.resources?[amount.name] {
                let total = names.firstIndex(of: amount.name).map { totals[$0] } ?? 0
                notes.append("asks \(amount.name) \(Resources.text(amount.value, of: amount.name)), more than the "
                             + "\(Resources.text(total, of: amount.name)) total: holds \(Resources.text(total, of: amount.name))")
            }
        }
        return Plan.Holding(weight: spec.slotCount(cpus: cpus), demands: demands,
                            note: notes.isEmpty ? nil : notes.joined(separator: "; "))
    }

    /// What `holding` gives, by name, as the events and the report show it: `cpus` (the slots held) first,
    /// then each limited resource held, in the order of the totals.
    public func amounts(slots: Int, demands: [Plan.Demand]) -> Resources {
        var amounts = [Resources.Amount(name: Resources.cpus, value: Int64(slots))]
        for demand in demands.sorted(by: { $0.resource < $1.resource }) where demand.amount > 0 {
            amounts.append(Resources.Amount(name: names[demand.resource], value: demand.amount))
        }
        return Resources(amounts)
    }
}

/// The `exclusive:` category names of a graph, numbered for the Plan.
struct ExclusivityCategories {
    let names: [String]
    private let indexByName: [String: Int]

    init(graph: TaskGraph) {
        names = Array(Set(graph.nodes.flatMap(\.spec.exclusive))).sorted()
        indexByName = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) })
    }

    func indices(of categories: [String]) -> [Int] { categories.compactMap { indexByName[$0] } }
}
