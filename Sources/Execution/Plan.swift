import PipelineModel

/// The scheduling rules of the contract as a pure value: which tasks are ready, which may start now,
/// and what finishing a task means for the rest.
///
/// No threads, clocks or I/O: every rule is unit-testable, and the Runner calls it under one lock.
/// Work the Plan cannot do itself (checking conditions, reading a fan-out's items, stopping a service)
/// it asks for through `takeRequests()`. Every call is O(log n) per task it touches.
public struct Plan: Sendable {
    /// What the Plan needs to know about one task.
    public struct Task: Sendable {
        public var id: TaskID
        public var queue: Int
        public var priority: Priority
        /// Remaining critical path including the task itself, in seconds or in tasks: one unit for all tasks.
        public var criticalPath: Double
        public var when: RunWhen
        public var allowsFailure: Bool
        /// Indices of the tasks this one needs.
        public var needs: [Int]
        /// It has `conditions:` to check once its needs are done (it shows `waiting` meanwhile).
        public var hasConditions: Bool
        /// Mutual-exclusion categories (indices): no two tasks sharing one execute at once.
        public var categories: [Int]
        /// Slots of `--jobs` it takes while executing: one per process of a parallel group.
        public var weight: Int
        /// A `service:`: its dependents start once it is ready, not when it ends.
        public var isService: Bool
        /// A `foreach: {from:}` task: its items are added at run time; it ends when they all have.
        public var isFanOut: Bool
        /// For an item of a dynamic fan-out, the fan-out task it belongs to.
        public var group: Int?
        /// It needs the terminal (`interactive`, `prompt`): it starts once nothing else executes, and nothing
        /// else starts until it ends, as ninja's `console` pool (docs/pipeline.md, "Interactive tasks").
        public var runsAlone: Bool
        /// Amounts of limited resources (`mem`, `gpus`, …; not `cpus`, which is `weight`) it holds while executing.
        public var demands: [Demand]

        public init(id: TaskID, queue: Int = 0, priority: Priority = .normal, criticalPath: Double = 1,
                    when: RunWhen = .success, allowsFailure: Bool = false, needs: [Int] = [], hasConditions: Bool = false,
                    categories: [Int] = [], weight: Int = 1, isService: Bool = false, isFanOut: Bool = false, group: Int? = nil,
                    runsAlone: Bool = false, demands: [Demand] = []) {
            self.id = id
            self.queue = queue
            self.priority = priority
            self.criticalPath = criticalPath
            self.when = when
            self.allowsFailure = allowsFailure
            self.needs = needs
            self.hasConditions = hasConditions
            self.categories = categories
            self.weight = weight
            self.isService = isService
            self.isFanOut = isFanOut
            self.group = group
            self.runsAlone = runsAlone
            self.demands = demands
        }
    }

    /// An amount of one limited resource, by its index in the Plan's `resourceTotals`.
    public struct Demand: Sendable, Equatable {
        public var resource: Int
        public var amount: Int64

        public init(resource: Int, amount: Int64) {
            self.resource = resource
            self.amount = amount
        }
    }

    /// What one attempt of a task holds while it executes: its slots and its limited resources
    /// (`LimitedResources.holding`), and for a retry that asked more than a total, what it holds instead.
    public struct Holding: Sendable, Equatable {
        /// `--jobs` slots, before the Plan caps them at `jobs`.
        public var weight: Int
        /// Each at most its total.
        public var demands: [Demand]
        /// `asks mem 16G, more than the 12G total: holds 12G`, or `nil`.
        public var note: String?

        public init(weight: Int, demands: [Demand], note: String? = nil) {
            self.weight = weight
            self.demands = demands
            self.note = note
        }
    }

    /// How a task ended, as the Runner reports it.
    public enum Outcome: Sendable, Equatable {
        case succeeded
        case failed
        case skipped
        case upToDate
        case cancelled
        /// Restored from the output cache: to its dependents, as good as succeeded.
        case restored
    }

    /// A state change the Plan decided on its own (ready, waiting, skipped, cancelled); the Runner turns
    /// each into an event.
    public struct Transition: Sendable, Equatable {
        public var task: Int
        public var from: TaskState
        public var to: TaskState
    }

    /// Work the Runner must do for the Plan, gathered since the last `takeRequests()`.
    public struct Requests: Sendable, Equatable {
        /// Tasks now `waiting`: check their conditions, then call `conditionsChecked`.
        public var checkConditions: [Int] = []
        /// Fan-out tasks now executing: read their items, then call `expand` (or `record` a failure).
        public var expand: [Int] = []
        /// Services that no remaining task needs: stop them.
        public var stopServices: [Int] = []
        /// Executing tasks whose retry waited for room (`retry(_:holding:)`) and now holds it: start their
        /// next attempt.
        public var retries: [Int] = []

        public var isEmpty: Bool { checkConditions.isEmpty && expand.isEmpty && stopServices.isEmpty && retries.isEmpty }
    }

    public private(set) var tasks: [Task]
    public private(set) var states: [TaskState]
    /// Whether a failure has stopped new starts (fail-fast) or a signal has cancelled the run.
    public private(set) var isStopping = false
    public private(set) var isCancelled = false
    /// `--jobs` slots in use.
    public private(set) var executingCount = 0
    public private(set) var terminalCount = 0
    /// Per limited resource (as `resourceTotals`), the amount executing tasks hold.
    public private(set) var resourcesInUse: [Int64]
    /// Per limited resource, the most tasks may hold at once.
    public let resourceTotals: [Int64]

    private let jobs: Int
    private let queueLimits: [Int]
    private let keepGoing: Bool
    private var order: ReadyOrder
    private var dependents: [[Int32]]
    private var unfinishedNeeds: [Int32]
    /// Per task: some need failed / some need did not succeed / some need was cancelled.
    private var needFailed: [Bool]
    private var needUnsatisfied: [Bool]
    private var needCancelled: [Bool]
    private var conditionsChecked: [Bool]
    private var executingByQueue: [Int]
    private var categoryHeld: [Bool]
    /// Tasks set aside until a category they need is free again.
    private var blockedByCategory: [[Int]]
    /// Services whose dependents were released when they became ready.
    private var serviceReleased: [Bool]
    /// Per service: dependents not yet in a terminal state.
    private var serviceNeeders: [Int32]
    /// Tasks found up to date before the run (with all their needs): they end as soon as they settle.
    private var upToDateBeforeRun: [Bool] = []
    /// Such tasks settled and not yet ended; a list rather than recursion, since along a chain of up-to-date
    /// tasks each one's end settles the next.
    private var upToDateToEnd: [Int] = []
    /// Slots held by services that are ready: they run on beside a task that runs alone, which may need them.
    private var readyServiceSlots = 0
    /// A task that runs alone is executing: nothing else starts.
    private var isAloneExecuting = false
    private var groupRemaining: [Int: Int] = [:]
    private var groupFailed: [Int: Bool] = [:]
    /// Per dynamic fan-out not read yet: the tasks whose per-item needs name its items, waiting for its
    /// list (see `waitForLists`).
    private var listWaiters: [Int: [Int]] = [:]
    /// Tasks with a per-item need that named no task at run time: each fails when it would start.
    private var unresolvedNeeds: Set<Int> = []
    /// Executing tasks whose next attempt waits for room for what it asks (`retry(_:holding:)`), first
    /// come first served; they hold nothing meanwhile.
    private var retriesWaitingForRoom: [Int] = []
    private var requests = Requests()

    /// - Parameters:
    ///   - jobs: most `--jobs` slots in use at once, at least 1.
    ///   - queueLimits: most executing at once per queue (`max_concurrent`), indexed by `Task.queue`.
    ///   - categoryCount: how many exclusivity categories `Task.categories` index into.
    ///   - keepGoing: after a failure, keep starting tasks that do not depend on it.
    ///   - resourceTotals: per limited resource that `Task.demands` index, the most held at once.
    public init(tasks: [Task], jobs: Int, queueLimits: [Int], categoryCount: Int = 0, keepGoing: Bool, resourceTotals: [Int64] = []) {
        self.tasks = tasks
        self.resourceTotals = resourceTotals
        self.resourcesInUse = Array(repeating: 0, count: resourceTotals.count)
        self.jobs = max(1, jobs)
        self.queueLimits = queueLimits.map { max(1, $0) }
        self.keepGoing = keepGoing
        let count = tasks.count
        states = Array(repeating: .pending, count: count)
        dependents = Array(repeating: [], count: count)
        unfinishedNeeds = Array(repeating: 0, count: count)
        needFailed = Array(repeating: false, count: count)
        needUnsatisfied = Array(repeating: false, count: count)
        needCancelled = Array(repeating: false, count: count)
        conditionsChecked = Array(repeating: false, count: count)
        serviceReleased = Array(repeating: false, count: count)
        serviceNeeders = Array(repeating: 0, count: count)
        for (index, task) in tasks.enumerated() {
            unfinishedNeeds[index] = Int32(task.needs.count)
            for need in task.needs {
                dependents[need].append(Int32(index))
                serviceNeeders[need] += 1
            }
        }
        let queueCount = max(queueLimits.count, (tasks.map(\.queue).max() ?? -1) + 1)
        order = ReadyOrder(tasks: tasks, dependents: dependents, jobs: self.jobs, queueCount: queueCount)
        executingByQueue = Array(repeating: 0, count: queueCount)
        let categories = max(categoryCount, (tasks.flatMap(\.categories).max() ?? -1) + 1)
        categoryHeld = Array(repeating: false, count: categories)
        blockedByCategory = Array(repeating: [], count: categories)
    }

    public var isFinished: Bool { terminalCount == tasks.count }

    /// Ranks the tasks again by these remaining critical paths (indexed like the tasks); call before `begin`.
    /// The runner learns expected durations only once it knows that some task will run.
    public mutating func rank(byCriticalPaths criticalPaths: [Double]) {
        for index in tasks.indices where index < criticalPaths.count { tasks[index].criticalPath = criticalPaths[index] }
        order.rank(tasks: tasks, dependents: dependents, jobs: jobs)
    }

    /// Marks the tasks found up to date before the run, whose needs are all up to date too: each ends as
    /// `up-to-date` (through `ready` and `executing`, as a task checked at its start does) when it settles,
    /// without taking a slot. Call before `begin`.
    public mutating func markUpToDate(_ flags: [Bool]) {
        upToDateBeforeRun = flags
    }

    /// Whether `markUpToDate` marked the task: found up to date before the run.
    public func isUpToDateBeforeRun(_ index: Int) -> Bool {
        index < upToDateBeforeRun.count && upToDateBeforeRun[index]
    }

    /// Makes the tasks that need nothing ready (or waiting), nor wait for a list; call once before the first `take`.
    public mutating func begin() -> [Transition] {
        var transitions: [Transition] = []
        // Still pending: a task settled through an earlier one's end (up to date before the run) is not again.
        for index in tasks.indices where unfinishedNeeds[index] == 0 && states[index] == .pending {
            settle(index, into: &transitions)
            endUpToDate(into: &transitions)
        }
        return transitions
    }

    /// The work asked of the Runner since the last call.
    public mutating func takeRequests() -> Requests {
        defer { requests = Requests() }
        return requests
    }

    /// The ready tasks that may start now, best first, marked executing; respects `jobs`, each queue's
    /// limit, exclusivity and resources. A task blocked by a held category moves to `waiting` (in `transitions`).
    public mutating func take() -> (started: [Int], transitions: [Transition]) {
        var started: [Int] = []
        var transitions: [Transition] = []
        // The best ready task that does not fit yet, and the ready tasks passed over while it waits.
        var reservation = Reservation()
        defer { reservation.passed.forEach { order.push($0.task, queue: $0.queue) } }
        // Retries come first, in the order they asked: their task was started already. One that does not
        // fit yet is the head no ready task may take from, as the best ready task would be.
        while let retry = retriesWaitingForRoom.first {
            guard mayRetryNow(retry) else {
                reservation.head = retry
                break
            }
            retriesWaitingForRoom.removeFirst()
            hold(retry)
            requests.retries.append(retry)
        }
        while executingCount < jobs && !isAloneExecuting {
            // Copies for the closure, which may not read `self` while `order` changes.
            let executing = executingByQueue, limits = queueLimits, jobs = jobs
            let isOpen = { (queue: Int) in executing[queue] < (queue < limits.count ? limits[queue] : jobs) }
            guard let best = order.first(inQueues: isOpen) else { break }
            let task = tasks[best.task]
            if let held = task.categories.first(where: { categoryHeld[$0] }) {
                order.take(best.task, queue: best.queue)
                blockedByCategory[held].append(best.task)
                transitions.append(Transition(task: best.task, from: .ready, to: .waiting))
                states[best.task] = .waiting
                continue
            }
            // A task that runs alone waits for those executing (ready services aside) to end, and nothing
            // passes it meanwhile, so it is not put off for ever by a stream of others.
            let waitsToRunAlone = task.runsAlone && (executingCount > readyServiceSlots || !retriesWaitingForRoom.isEmpty)
            if waitsToRunAlone && reservation.head == nil { break }
            if waitsToRunAlone || !fits(best.task, beside: reservation.head) {
                // Nothing may take what the head waits for; once no slot is left beside it, nothing can start.
                let head = reservation.head ?? best.task
                guard reservation.passOver(best, head: head, spareSlots: spareSlots(beside: head)) else { break }
                order.take(best.task, queue: best.queue)
                continue
            }
            if task.runsAlone { isAloneExecuting = true }
            order.take(best.task, queue: best.queue)
            states[best.task] = .executing
            hold(best.task)
            executingByQueue[best.queue] += 1
            for category in task.categories { categoryHeld[category] = true }
            started.append(best.task)
        }
        return (started, transitions)
    }

    /// Records how an executing (or waiting) task ended and decides what follows for its dependents.
    public mutating func record(_ index: Int, _ outcome: Outcome) -> [Transition] {
        var transitions: [Transition] = []
        let previous = states[index]
        guard !previous.isTerminal else { return transitions }
        let heldSlots = previous == .executing && !tasks[index].isFanOut
        if heldSlots {
            // A retry still waiting for room holds nothing (`retry(_:holding:)`).
            if let waiting = retriesWaitingForRoom.firstIndex(of: index) {
                retriesWaitingForRoom.remove(at: waiting)
            } else {
                releaseHoldings(of: index)
            }
            executingByQueue[tasks[index].queue] -= 1
            if tasks[index].isService && serviceReleased[index] { readyServiceSlots -= min(max(tasks[index].weight, 1), jobs) }
            if tasks[index].runsAlone { isAloneExecuting = false }
        }
        if tasks[index].isService && serviceReleased[index] {
            endReleasedService(index, as: outcome, into: &transitions)
        } else {
            finish(index, as: outcome, into: &transitions)
        }
        // After `finish`: the task's own transition comes first (the Runner reports it with its exit code
        // and duration), then what its end released.
        if heldSlots { release(categoriesOf: index, into: &transitions) }
        if outcome == .failed, !tasks[index].allowsFailure, !keepGoing, !isStopping {
            isStopping = true
            cancelWaiting(into: &transitions)
        }
        return transitions
    }

    /// A waiting task's conditions were checked: it becomes ready when they hold, else it is skipped.
    public mutating func conditionsChecked(_ index: Int, met: Bool) -> [Transition] {
        var transitions: [Transition] = []
        guard states[index] == .waiting else { return transitions }
        conditionsChecked[index] = true
        if met {
            // The same road as a task without conditions: ready, or cancelled, or a fan-out reading its list.
            settle(index, into: &transitions)
        } else {
            finish(index, as: .skipped, into: &transitions)
        }
        return transitions
    }

    /// A service is ready: the tasks that need it may go ahead while it keeps running.
    public mutating func serviceReady(_ index: Int) -> [Transition] {
        var transitions: [Transition] = []
        guard tasks[index].isService, states[index] == .executing, !serviceReleased[index] else { return transitions }
        serviceReleased[index] = true
        readyServiceSlots += min(max(tasks[index].weight, 1), jobs)
        if serviceNeeders[index] == 0 { requests.stopServices.append(index) }
        for dependent in dependents[index] {
            unfinishedNeeds[Int(dependent)] -= 1
            if unfinishedNeeds[Int(dependent)] == 0 { settle(Int(dependent), into: &transitions) }
        }
        return transitions
    }

    /// How many tasks that need the service `index` have not ended yet.
    public func remainingNeeders(of index: Int) -> Int { Int(serviceNeeders[index]) }

    /// Adds the items of an executing fan-out task, and the fan-out ends once they all have. The fan-out's
    /// own needs are done; an item needs only what its `needs` name: its per-item needs, indices of tasks
    /// already in the Plan, in any state (docs/pipeline.md, "Per-item chains"). An item with `hasConditions`
    /// checks its own (those naming `{{ item }}`); the fan-out checked the rest before its list was read.
    /// The tasks waiting for this list (`listWaiters(of:)`) go on.
    /// - Parameter resolved: the needs the items' per-item needs named, and those of the tasks waiting for
    ///   this list (see `ItemNeeds`).
    /// - Returns: the new tasks' indices, with the transitions.
    public mutating func expand(_ group: Int, items: [Task], resolved: ItemNeeds = ItemNeeds()) -> (indices: Range<Int>, transitions: [Transition]) {
        var transitions: [Transition] = []
        let first = tasks.count
        guard tasks[group].isFanOut, states[group] == .executing else { return (first..<first, transitions) }
        for var item in items {
            let needs = item.needs
            item.needs = []
            item.group = group
            tasks.append(item)
            states.append(.pending)
            dependents.append([])
            unfinishedNeeds.append(0)
            needFailed.append(false)
            needUnsatisfied.append(false)
            needCancelled.append(false)
            conditionsChecked.append(false)
            serviceReleased.append(false)
            serviceNeeders.append(0)
            addNeeds(needs, to: tasks.count - 1)
        }
        let added = first..<tasks.count
        order.add(items: added, of: group)
        for position in resolved.unresolvedItems where position < items.count { unresolvedNeeds.insert(first + position) }
        for (waiter, needs) in resolved.waiterNeeds.sorted(by: { $0.key < $1.key }) { addNeeds(needs, to: waiter) }
        for waiter in resolved.unresolvedWaiters where !states[waiter].isTerminal { unresolvedNeeds.insert(waiter) }
        groupRemaining[group] = items.count
        releaseListWaiters(of: group, into: &transitions)
        if items.isEmpty { finish(group, as: .succeeded, into: &transitions) }
        for index in added where unfinishedNeeds[index] == 0 { settle(index, into: &transitions) }
        return (added, transitions)
    }

    /// Stops the run (SIGINT/SIGTERM): no new task starts, what is ready or waiting is cancelled, except
    /// `when: always` tasks, which still run once their needs are done.
    public mutating func cancel() -> [Transition] {
        var transitions: [Transition] = []
        guard !isCancelled else { return transitions }
        isCancelled = true
        isStopping = true
        cancelWaiting(into: &transitions)
        return transitions
    }

    // MARK: - Resources

    /// The slots and the limited resources an executing task holds (as its transition into `executing`
    /// shows them): slots at most `jobs`.
    public func holding(of index: Int) -> (slots: Int, demands: [Demand]) {
        (slots(of: index), tasks[index].demands)
    }

    /// The next attempt of an executing task holds `holding` instead of what the last one held
    /// (`retry_scale`, docs/pipeline.md "Retries"): what it held is free again, and it takes the new
    /// amounts now if they fit, as a task's start would; otherwise it waits for them ahead of every ready
    /// task, and a later `take` hands it over in `Requests.retries`. Amounts are at most their totals
    /// (`LimitedResources.holding`), so a retry waits at most for the tasks executing beside it to end.
    public mutating func retry(_ index: Int, holding: Holding) -> RetryRoom {
        guard states[index] == .executing, !tasks[index].isFanOut, !retriesWaitingForRoom.contains(index) else { return .same }
        // The same amounts (no `retry_scale`): held on, as always.
        if holding.weight == tasks[index].weight && holding.demands == tasks[index].demands { return .same }
        releaseHoldings(of: index)
        tasks[index].weight = holding.weight
        tasks[index].demands = holding.demands
        if retriesWaitingForRoom.isEmpty && mayRetryNow(index) {
            hold(index)
            return .changed
        }
        retriesWaitingForRoom.append(index)
        return .waiting
    }

    /// What `retry(_:holding:)` did.
    public enum RetryRoom: Sendable, Equatable {
        /// The next attempt holds what the last one held.
        case same
        /// It holds its new amounts now; what the last attempt held beyond them is free for others.
        case changed
        /// It holds nothing until a later `take` hands it its amounts (`Requests.retries`).
        case waiting

        /// Whether the next attempt may start now.
        public var holdsRoom: Bool { self != .waiting }
    }

    /// Whether a retry waiting for room may take it now: it fits, and no other task runs alone.
    private func mayRetryNow(_ index: Int) -> Bool {
        (!isAloneExecuting || tasks[index].runsAlone) && fits(index, beside: nil)
    }

    /// The ready tasks `take` passed over while the best one waits for room (docs/pipeline.md, "Resources").
    private struct Reservation {
        /// The best ready task that did not fit: nothing else may take what it needs.
        var head: Int?
        var passed: [(queue: Int, task: Int)] = []

        /// How many ready tasks one `take` looks past the head for one that fits beside it: enough to fill
        /// idle slots with small tasks, and a bound on the work of each call (the Plan is O(log n) a task).
        static let lookahead = 32

        /// Sets `best` aside, the head waiting for room; `false` when looking further is useless: no slot
        /// is free beside the head, or the lookahead is spent.
        mutating func passOver(_ best: (queue: Int, task: Int), head: Int, spareSlots: Int) -> Bool {
            guard spareSlots > 0, passed.count < Self.lookahead else { return false }
            if self.head == nil { self.head = head }
            passed.append((best.queue, best.task))
            return true
        }
    }

    /// `--jobs` slots the task holds while executing: its weight (`cpus`, or a parallel group's processes), at most `jobs`.
    private func slots(of index: Int) -> Int { min(max(tasks[index].weight, 1), jobs) }

    /// Slots free beyond what `head` needs.
    private func spareSlots(beside head: Int) -> Int { jobs - executingCount - slots(of: head) }

    /// Whether the task may start now: its slots and each resource it asks for are free, and, while `head`
    /// waits for room, it takes none of what `head` needs: of each resource, only what would be left over
    /// once `head` had its share. So the head starts as soon as it would have with nothing passing it.
    private func fits(_ index: Int, beside head: Int?) -> Bool {
        let headSlots = head.map(slots(of:)) ?? 0
        // A lone task on an idle machine may use every slot.
        if executingCount > 0 || head != nil, executingCount + slots(of: index) + headSlots > jobs { return false }
        for demand in tasks[index].demands where demand.amount > 0 {
            let headAmount = head.map { tasks[$0].demands.first { $0.resource == demand.resource }?.amount ?? 0 } ?? 0
            if resourcesInUse[demand.resource] + demand.amount + headAmount > resourceTotals[demand.resource] { return false }
        }
        return true
    }

    private mutating func hold(_ index: Int) {
        executingCount += slots(of: index)
        for demand in tasks[index].demands { resourcesInUse[demand.resource] += demand.amount }
    }

    private mutating func releaseHoldings(of index: Int) {
        executingCount -= slots(of: index)
        for demand in tasks[index].demands { resourcesInUse[demand.resource] -= demand.amount }
    }

    // MARK: - Rules

    /// All needs are done: the task becomes ready (or waits for its conditions), or the `when` rules skip
    /// or cancel it.
    private mutating func settle(_ index: Int, into transitions: inout [Transition]) {
        // Field by field: a copy of the task retains its arrays (perf: 4% of a checked no-op rerun's transitions).
        let when = tasks[index].when
        let runs: Bool
        switch when {
        case .success: runs = !needUnsatisfied[index]
        case .failure: runs = needFailed[index]
        case .always: runs = true
        }
        if !runs {
            let cancelled = needCancelled[index] && when == .success
            finish(index, as: cancelled ? .cancelled : .skipped, into: &transitions)
        } else if isStopping && when == .success {
            finish(index, as: .cancelled, into: &transitions)
        } else if unresolvedNeeds.contains(index) {
            failUnresolved(index, into: &transitions)
        } else if isUpToDateBeforeRun(index) {
            upToDateToEnd.append(index)
        } else if tasks[index].hasConditions && !conditionsChecked[index] {
            transitions.append(Transition(task: index, from: states[index], to: .waiting))
            states[index] = .waiting
            requests.checkConditions.append(index)
        } else if tasks[index].isFanOut {
            transitions.append(Transition(task: index, from: states[index], to: .ready))
            transitions.append(Transition(task: index, from: .ready, to: .executing))
            states[index] = .executing
            requests.expand.append(index)
        } else {
            makeReady(index, into: &transitions)
        }
    }

    private mutating func endUpToDate(into transitions: inout [Transition]) {
        while let index = upToDateToEnd.popLast() {
            transitions.append(Transition(task: index, from: states[index], to: .ready))
            transitions.append(Transition(task: index, from: .ready, to: .executing))
            states[index] = .executing
            finish(index, as: .upToDate, into: &transitions)
        }
    }

    private mutating func makeReady(_ index: Int, into transitions: inout [Transition]) {
        transitions.append(Transition(task: index, from: states[index], to: .ready))
        states[index] = .ready
        order.push(index, queue: tasks[index].queue)
    }

    private mutating func finish(_ index: Int, as outcome: Outcome, into transitions: inout [Transition]) {
        let state = Self.state(of: outcome)
        transitions.append(Transition(task: index, from: states[index], to: state))
        states[index] = state
        terminalCount += 1
        order.ended(index)
        for need in tasks[index].needs where tasks[need].isService {
            serviceNeeders[need] -= 1
            if serviceNeeders[need] == 0 && states[need] == .executing { requests.stopServices.append(need) }
        }
        if let group = tasks[index].group { itemEnded(index, group: group, outcome: outcome, into: &transitions) }
        // A fan-out that ends unread (it failed to read its list, or was skipped): those waiting for its items
        // learn how it ended.
        if listWaiters[index] != nil { releaseListWaiters(of: index, endedAs: outcome, into: &transitions) }
        let allowedFailure = outcome == .failed && tasks[index].allowsFailure
        for dependent in dependents[index] {
            let dependent = Int(dependent)
            note(outcome, allowedFailure: allowedFailure, forDependent: dependent)
            unfinishedNeeds[dependent] -= 1
            if unfinishedNeeds[dependent] == 0 { settle(dependent, into: &transitions) }
        }
    }

    private mutating func note(_ outcome: Outcome, allowedFailure: Bool, forDependent dependent: Int) {
        switch outcome {
        case .succeeded, .upToDate, .restored: break
        case .failed:
            needFailed[dependent] = true
            if !allowedFailure { needUnsatisfied[dependent] = true }
        case .skipped: needUnsatisfied[dependent] = true
        case .cancelled:
            needUnsatisfied[dependent] = true
            needCancelled[dependent] = true
        }
    }

    /// A released service ended: it is terminal now; its dependents already went ahead, except that those
    /// not started yet cannot work without it, so a service that dies early counts as a failed need for
    /// them (contract: "services"): skipped unless their `when` says otherwise, now or once their other
    /// needs are done.
    private mutating func endReleasedService(_ index: Int, as outcome: Outcome, into transitions: inout [Transition]) {
        let state = Self.state(of: outcome)
        transitions.append(Transition(task: index, from: states[index], to: state))
        states[index] = state
        terminalCount += 1
        order.ended(index)
        guard outcome == .failed else { return }
        for dependent in dependents[index].map(Int.init) {
            let waiting = states[dependent] == .ready || states[dependent] == .waiting
            guard waiting || states[dependent] == .pending else { continue }
            note(.failed, allowedFailure: false, forDependent: dependent)
            if waiting && tasks[dependent].when != .always {
                removeFromReady(dependent)
                finish(dependent, as: .skipped, into: &transitions)
            }
        }
    }

    private mutating func itemEnded(_ item: Int, group: Int, outcome: Outcome, into transitions: inout [Transition]) {
        if outcome == .failed && !tasks[item].allowsFailure || outcome == .cancelled { groupFailed[group] = true }
        groupRemaining[group, default: 0] -= 1
        guard groupRemaining[group] == 0, states[group] == .executing else { return }
        let outcome: Outcome = groupFailed[group] == true ? (isCancelled ? .cancelled : .failed) : .succeeded
        finish(group, as: outcome, into: &transitions)
    }

    private mutating func release(categoriesOf index: Int, into transitions: inout [Transition]) {
        for category in tasks[index].categories {
            categoryHeld[category] = false
            let blocked = blockedByCategory[category]
            blockedByCategory[category] = []
            for task in blocked where states[task] == .waiting { makeReady(task, into: &transitions) }
        }
    }

    /// Cancels every ready or category-blocked task that is not `when: failure` or `always`.
    private mutating func cancelWaiting(into transitions: inout [Transition]) {
        for queue in executingByQueue.indices {
            for index in order.removeAll(queue: queue) {
                if tasks[index].when == .success {
                    finish(index, as: .cancelled, into: &transitions)
                } else {
                    order.push(index, queue: queue)
                }
            }
        }
        for category in blockedByCategory.indices {
            let blocked = blockedByCategory[category]
            blockedByCategory[category] = blocked.filter { tasks[$0].when != .success }
            for index in blocked where tasks[index].when == .success && states[index] == .waiting {
                finish(index, as: .cancelled, into: &transitions)
            }
        }
    }

    private mutating func removeFromReady(_ index: Int) {
        order.remove(index)
        for category in blockedByCategory.indices { blockedByCategory[category].removeAll { $0 == index } }
    }

    private static func state(of outcome: Outcome) -> TaskState {
        switch outcome {
        case .succeeded: .succeeded
        case .failed: .failed
        case .skipped: .skipped
        case .upToDate: .upToDate
        case .cancelled: .cancelled
        case .restored: .restored
        }
    }
}

// MARK: - Per-item needs met at run time

extension Plan {
    /// What the per-item needs named once a fan-out's list was read (docs/pipeline.md, "Per-item chains").
    public struct ItemNeeds: Sendable {
        /// Positions among the new items of those whose per-item need named no task: each fails when it
        /// would start, as a task that failed.
        public var unresolvedItems: Set<Int> = []
        /// Per task that waited for the list (`listWaiters(of:)`), its needs among the new items.
        public var waiterNeeds: [Int: [Int]] = [:]
        /// Tasks that waited for the list and whose per-item need named none of its items: each fails when
        /// it would start.
        public var unresolvedWaiters: Set<Int> = []

        public init() {}
    }

    /// Makes tasks wait for dynamic fan-outs' lists to be read, as well as for their needs: a task whose
    /// per-item need names an item of such a fan-out (`map[{{ index }}]`) can tell which item only once
    /// the list is read (docs/pipeline.md, "Per-item chains"). Call before `begin`.
    /// - Parameter lists: per task, the fan-outs whose lists it waits for; none of them among its `needs`.
    public mutating func waitForLists(_ lists: [Int: [Int]]) {
        for (task, groups) in lists.sorted(by: { $0.key < $1.key }) {
            for group in groups where tasks[group].isFanOut {
                listWaiters[group, default: []].append(task)
                unfinishedNeeds[task] += 1
            }
        }
    }

    /// The tasks waiting for the list of the fan-out `group` to be read: `expand` gives those that are not
    /// fan-outs themselves their needs among its items (`ItemNeeds.waiterNeeds`).
    public func listWaiters(of group: Int) -> [Int] { listWaiters[group] ?? [] }

    /// Adds needs to a task that is still pending (an item being added, or a task waiting for a list): it
    /// waits for those not ended; those ended count as they ended (a failed one skips it, unless its
    /// `when` says otherwise).
    private mutating func addNeeds(_ needs: [Int], to task: Int) {
        guard states[task] == .pending else { return }
        for need in needs where need != task && !tasks[task].needs.contains(need) {
            tasks[task].needs.append(need)
            if tasks[need].isService { serviceNeeders[need] += 1 }
            if let outcome = Self.outcome(of: states[need]) {
                note(outcome, allowedFailure: outcome == .failed && tasks[need].allowsFailure, forDependent: task)
            } else if !(tasks[need].isService && serviceReleased[need]) {
                dependents[need].append(Int32(task))
                unfinishedNeeds[task] += 1
            }
        }
    }

    /// The fan-out `group` was read (`endedAs` nil) or ended unread: the tasks waiting for its list go on.
    private mutating func releaseListWaiters(of group: Int, endedAs outcome: Outcome? = nil, into transitions: inout [Transition]) {
        guard let waiters = listWaiters.removeValue(forKey: group) else { return }
        for waiter in waiters where !states[waiter].isTerminal {
            if let outcome { note(outcome, allowedFailure: outcome == .failed && tasks[group].allowsFailure, forDependent: waiter) }
            unfinishedNeeds[waiter] -= 1
            if unfinishedNeeds[waiter] == 0 { settle(waiter, into: &transitions) }
        }
    }

    /// Fails a task whose per-item need named no task; as any failure, it stops the run unless `--keep-going`.
    private mutating func failUnresolved(_ index: Int, into transitions: inout [Transition]) {
        unresolvedNeeds.remove(index)
        finish(index, as: .failed, into: &transitions)
        if !tasks[index].allowsFailure, !keepGoing, !isStopping {
            isStopping = true
            cancelWaiting(into: &transitions)
        }
    }

    /// How a task in a terminal state ended; `nil` while it has not.
    private static func outcome(of state: TaskState) -> Outcome? {
        guard state.isTerminal else { return nil }
        let outcomes: [Outcome] = [.succeeded, .failed, .skipped, .upToDate, .cancelled, .restored]
        return outcomes.first { Self.state(of: $0) == state }
    }
}
