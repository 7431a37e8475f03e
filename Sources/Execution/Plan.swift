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

        public init(id: TaskID, queue: Int = 0, priority: Priority = .normal, criticalPath: Double = 1,
                    when: RunWhen = .success, allowsFailure: Bool = false, needs: [Int] = [], hasConditions: Bool = false,
                    categories: [Int] = [], weight: Int = 1, isService: Bool = false, isFanOut: Bool = false, group: Int? = nil,
                    runsAlone: Bool = false) {
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

        public var isEmpty: Bool { checkConditions.isEmpty && expand.isEmpty && stopServices.isEmpty }
    }

    public private(set) var tasks: [Task]
    public private(set) var states: [TaskState]
    /// Whether a failure has stopped new starts (fail-fast) or a signal has cancelled the run.
    public private(set) var isStopping = false
    public private(set) var isCancelled = false
    /// `--jobs` slots in use.
    public private(set) var executingCount = 0
    public private(set) var terminalCount = 0

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
    private var requests = Requests()

    /// - Parameters:
    ///   - jobs: most `--jobs` slots in use at once, at least 1.
    ///   - queueLimits: most executing at once per queue (`max_concurrent`), indexed by `Task.queue`.
    ///   - categoryCount: how many exclusivity categories `Task.categories` index into.
    ///   - keepGoing: after a failure, keep starting tasks that do not depend on it.
    public init(tasks: [Task], jobs: Int, queueLimits: [Int], categoryCount: Int = 0, keepGoing: Bool) {
        self.tasks = tasks
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

    /// Makes the tasks that need nothing ready (or waiting); call once before the first `take`.
    public mutating func begin() -> [Transition] {
        var transitions: [Transition] = []
        for index in tasks.indices where tasks[index].needs.isEmpty {
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
    /// limit and exclusivity. A task blocked by a held category moves to `waiting` (in `transitions`).
    public mutating func take() -> (started: [Int], transitions: [Transition]) {
        var started: [Int] = []
        var transitions: [Transition] = []
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
            // A parallel group waits for enough free slots rather than being passed by lighter tasks.
            let weight = min(max(task.weight, 1), jobs)
            if executingCount > 0 && executingCount + weight > jobs { break }
            // A task that runs alone waits for those executing (ready services aside) to end, and nothing
            // passes it meanwhile, so it is not put off for ever by a stream of others.
            if task.runsAlone && executingCount > readyServiceSlots { break }
            if task.runsAlone { isAloneExecuting = true }
            order.take(best.task, queue: best.queue)
            states[best.task] = .executing
            executingCount += weight
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
            executingCount -= min(max(tasks[index].weight, 1), jobs)
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

    /// Adds the items of an executing fan-out task; they need nothing more (the fan-out's own needs are
    /// done), and the fan-out ends once they all have. An item with `hasConditions` checks its own (those
    /// naming `{{ item }}`); the fan-out checked the rest before its list was read. Returns the new tasks' indices with the transitions.
    public mutating func expand(_ group: Int, items: [Task]) -> (indices: Range<Int>, transitions: [Transition]) {
        var transitions: [Transition] = []
        let first = tasks.count
        guard tasks[group].isFanOut, states[group] == .executing else { return (first..<first, transitions) }
        for var item in items {
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
        }
        let added = first..<tasks.count
        order.add(items: added, of: group)
        groupRemaining[group] = items.count
        if items.isEmpty { finish(group, as: .succeeded, into: &transitions) }
        for index in added { settle(index, into: &transitions) }
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
