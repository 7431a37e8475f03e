import PipelineModel

/// Which ready task starts next (docs/pipeline.md, "Order of ready tasks"): higher priority first; among
/// equals, the one with the longest remaining critical path when that path is urgent, otherwise the one
/// furthest along its chain of needs; then file order.
///
/// Critical-path order (list scheduling by least slack) only shortens a run when a path decides its end.
/// While far more work is left than slots can take at once, the end is bounded by that work over the slots,
/// no ready task is urgent, and continuing a chain that has started gives its results early at the same
/// makespan: in a per-sample `map` → `sort` → `index` chain, the first `index` comes at the start instead
/// of after every `map`.
///
/// Two heaps per queue hold the same ready tasks, one by each order; a task taken or removed through one
/// stays in the other until it surfaces, and is dropped then. Every call is O(log n) per task touched.
struct ReadyOrder: Sendable {
    /// Per task: its place in (priority, remaining critical path, file order).
    private var criticalRank: [Int32]
    /// Per task: priority, then depth (needs before it along its longest chain of needs), the deeper first.
    private var chainKey: [Int32]
    private var criticalPath: [Double]
    /// Per task: expected slot time of its own not yet ended, in the unit of the critical paths.
    private var work: [Double]
    /// What the tasks not yet ended still have to do, together.
    private var remainingWork = 0.0
    private let slots: Double
    private var byCriticalPath: [RankedHeap]
    private var byChain: [RankedHeap]
    private var isQueued: [Bool]

    /// - Parameters:
    ///   - dependents: per task, the tasks that need it.
    ///   - jobs: `--jobs` slots.
    init(tasks: [Plan.Task], dependents: [[Int32]], jobs: Int, queueCount: Int) {
        slots = Double(max(1, jobs))
        // The keys apart from the tasks: comparing `tasks[left]` with `tasks[right]` copied both tasks,
        // their id and lists retained and released, 57 ms for 100,000 tasks (perf, no-op rerun).
        let priorities = tasks.map(\.priority.rank)
        criticalPath = tasks.map(\.criticalPath)
        criticalRank = Self.criticalRanks(priorities: priorities, criticalPaths: criticalPath)
        chainKey = Self.chainKeys(priorities: priorities, dependents: dependents)
        let paths = criticalPath
        work = tasks.indices.map { index in
            // Tasks run on a failure are left out: a run meant to succeed never starts them.
            guard tasks[index].when != .failure, paths[index].isFinite else { return 0 }
            // The critical paths carry each task's expected time: its own path less the longest after it.
            let after = dependents[index].reduce(0.0) { max($0, paths[Int($1)]) }
            return max(paths[index] - after, 0) * Double(min(max(tasks[index].weight, 1), max(1, jobs)))
        }
        remainingWork = work.reduce(0, +)
        byCriticalPath = Array(repeating: RankedHeap(), count: queueCount)
        byChain = Array(repeating: RankedHeap(), count: queueCount)
        isQueued = Array(repeating: false, count: tasks.count)
    }

    /// Higher priority first, then the longer remaining critical path, then file order.
    private static func criticalRanks(priorities: [Int], criticalPaths: [Double]) -> [Int32] {
        let order = priorities.indices.sorted { left, right in
            if priorities[left] != priorities[right] { return priorities[left] > priorities[right] }
            if criticalPaths[left] != criticalPaths[right] { return criticalPaths[left] > criticalPaths[right] }
            return left < right
        }
        var rank = [Int32](repeating: 0, count: priorities.count)
        for (position, index) in order.enumerated() { rank[index] = Int32(position) }
        return rank
    }

    /// Higher priority first, then the deeper task; the heap breaks ties by index, which is file order.
    private static func chainKeys(priorities: [Int], dependents: [[Int32]]) -> [Int32] {
        // Depths in one pass over the tasks in an order where needs come first (Kahn's, first in first out).
        var depth = [Int32](repeating: 0, count: priorities.count)
        var waitingFor = [Int32](repeating: 0, count: priorities.count)
        for needers in dependents { for dependent in needers { waitingFor[Int(dependent)] += 1 } }
        var next = priorities.indices.filter { waitingFor[$0] == 0 }
        var position = 0
        while position < next.count {
            let task = next[position]
            position += 1
            for dependent in dependents[task] {
                let dependent = Int(dependent)
                depth[dependent] = max(depth[dependent], depth[task] + 1)
                waitingFor[dependent] -= 1
                if waitingFor[dependent] == 0 { next.append(dependent) }
            }
        }
        let deepest = depth.max() ?? 0
        let highest = Priority.allCases.map(\.rank).max() ?? 0
        return priorities.indices.map { index in Int32(highest - priorities[index]) * (deepest + 1) + (deepest - depth[index]) }
    }

    /// Ranks the tasks again by these remaining critical paths (indexed like the tasks); before any is queued.
    mutating func rank(tasks: [Plan.Task], dependents: [[Int32]], jobs: Int) {
        self = ReadyOrder(tasks: tasks, dependents: dependents, jobs: jobs, queueCount: byChain.count)
    }

    /// Adds the items of a dynamic fan-out, placed as their fan-out is; the fan-out's own expected time
    /// is now theirs, each item's.
    mutating func add(items: Range<Int>, of group: Int) {
        let share = work[group]
        remainingWork -= share
        work[group] = 0
        for _ in items {
            criticalRank.append(criticalRank[group])
            chainKey.append(chainKey[group])
            criticalPath.append(criticalPath[group])
            work.append(share)
            isQueued.append(false)
            remainingWork += share
        }
    }

    mutating func push(_ task: Int, queue: Int) {
        isQueued[task] = true
        byCriticalPath[queue].push(task, rank: criticalRank[task])
        byChain[queue].push(task, rank: chainKey[task])
    }

    /// The best ready task among the queues `isOpen` admits, left queued; nil when they hold none.
    mutating func first(inQueues isOpen: (Int) -> Bool) -> (queue: Int, task: Int)? {
        var critical: (queue: Int, rank: Int32, task: Int)?
        for queue in byCriticalPath.indices where isOpen(queue) {
            guard let head = Self.head(of: &byCriticalPath[queue], isQueued: isQueued) else { continue }
            if let current = critical, (current.rank, current.task) < (head.rank, head.task) { continue }
            critical = (queue, head.rank, head.task)
        }
        guard let critical else { return nil }
        if isUrgent(critical.task) { return (critical.queue, critical.task) }
        var chain: (queue: Int, key: Int32, task: Int)?
        for queue in byChain.indices where isOpen(queue) {
            guard let head = Self.head(of: &byChain[queue], isQueued: isQueued) else { continue }
            if let current = chain, (current.key, current.task) < (head.rank, head.task) { continue }
            chain = (queue, head.rank, head.task)
        }
        return chain.map { ($0.queue, $0.task) } ?? (critical.queue, critical.task)
    }

    /// Whether the task's remaining path may decide the run's end: it is at least half the time the work
    /// left takes on every slot. Half, not all: that estimate assumes no slot ever waits for a need, so it
    /// comes short of the end, and a path taken up late lengthens the run. On makespan.sh's DAGs, simulated
    /// in Benchmarks/lib/makespan.py, half kept the makespans of critical-path order (mean ratio to the bound
    /// within 0.3%), where the full estimate made them 2-5% longer.
    private func isUrgent(_ task: Int) -> Bool {
        2 * criticalPath[task] * slots >= remainingWork
    }

    /// Removes `task`, which `first` returned, from the ready tasks.
    mutating func take(_ task: Int, queue: Int) {
        remove(task)
        _ = Self.head(of: &byCriticalPath[queue], isQueued: isQueued)
        _ = Self.head(of: &byChain[queue], isQueued: isQueued)
    }

    /// No longer ready: its entries are dropped as they surface.
    mutating func remove(_ task: Int) { isQueued[task] = false }

    /// Removes and returns every ready task of the queue, in no particular order.
    mutating func removeAll(queue: Int) -> [Int] {
        _ = byChain[queue].removeAll()
        var removed: [Int] = []
        for task in byCriticalPath[queue].removeAll() where isQueued[task] {
            isQueued[task] = false
            removed.append(task)
        }
        return removed
    }

    /// The task ended (however): its expected time is no longer ahead.
    mutating func ended(_ task: Int) {
        remainingWork = max(0, remainingWork - work[task])
        work[task] = 0
    }

    /// The heap's first task still queued, dropping those that are not.
    private static func head(of heap: inout RankedHeap, isQueued: [Bool]) -> (rank: Int32, task: Int)? {
        while let head = heap.firstRank {
            if isQueued[head.task] { return head }
            _ = heap.pop()
        }
        return nil
    }
}
