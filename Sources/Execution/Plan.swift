import PipelineModel

/// The scheduling rules of the contract as a pure value: which tasks are ready, which may start now,
/// and what finishing a task means for the rest.
///
/// No threads, clocks or I/O: every rule is unit-testable, and the Runner calls it under one lock.
/// Every call is O(log n) per task it touches, so a whole run is O((tasks + edges) log tasks).
public struct Plan: Sendable {
    /// What the Plan needs to know about one task.
    public struct Task: Sendable {
        public var id: TaskID
        public var queue: Int
        public var priority: Priority
        /// Remaining critical path including the task itself (seconds or task count; only order matters).
        public var criticalPath: Double
        public var when: RunWhen
        public var allowsFailure: Bool
        /// Indices of the tasks this one needs.
        public var needs: [Int]

        public init(id: TaskID, queue: Int = 0, priority: Priority = .normal, criticalPath: Double = 1,
                    when: RunWhen = .success, allowsFailure: Bool = false, needs: [Int] = []) {
            self.id = id
            self.queue = queue
            self.priority = priority
            self.criticalPath = criticalPath
            self.when = when
            self.allowsFailure = allowsFailure
            self.needs = needs
        }
    }

    /// How a task ended, as the Runner reports it.
    public enum Outcome: Sendable, Equatable {
        case succeeded
        case failed
        case skipped
        case upToDate
        case cancelled
    }

    /// A state change the Plan decided on its own (ready, skipped, cancelled); the Runner turns each
    /// into an event.
    public struct Transition: Sendable, Equatable {
        public var task: Int
        public var from: TaskState
        public var to: TaskState
    }

    public let tasks: [Task]
    public private(set) var states: [TaskState]
    /// Whether a failure has stopped new starts (fail-fast) or a signal has cancelled the run.
    public private(set) var isStopping = false
    public private(set) var isCancelled = false
    public private(set) var executingCount = 0
    public private(set) var terminalCount = 0

    private let jobs: Int
    private let queueLimits: [Int]
    private let keepGoing: Bool
    private var dependents: [[Int32]]
    private var unfinishedNeeds: [Int32]
    /// Per task: some need failed / some need did not succeed (failed, skipped or cancelled).
    private var needFailed: [Bool]
    private var needUnsatisfied: [Bool]
    private var needCancelled: [Bool]
    private var readyByQueue: [RankedHeap]
    private var executingByQueue: [Int]

    /// - Parameters:
    ///   - jobs: most tasks executing at once overall (`--jobs`), at least 1.
    ///   - queueLimits: most executing at once per queue (`max_concurrent`), indexed by `Task.queue`.
    ///   - keepGoing: after a failure, keep starting tasks that do not depend on it.
    public init(tasks: [Task], jobs: Int, queueLimits: [Int], keepGoing: Bool) {
        self.tasks = tasks
        self.jobs = max(1, jobs)
        self.queueLimits = queueLimits.map { max(1, $0) }
        self.keepGoing = keepGoing
        states = Array(repeating: .pending, count: tasks.count)
        dependents = Array(repeating: [], count: tasks.count)
        unfinishedNeeds = Array(repeating: 0, count: tasks.count)
        needFailed = Array(repeating: false, count: tasks.count)
        needUnsatisfied = Array(repeating: false, count: tasks.count)
        needCancelled = Array(repeating: false, count: tasks.count)
        for (index, task) in tasks.enumerated() {
            unfinishedNeeds[index] = Int32(task.needs.count)
            for need in task.needs { dependents[need].append(Int32(index)) }
        }
        // Contract, scheduling rules: higher priority first, then longer remaining critical path, then file order.
        let order = tasks.indices.sorted { left, right in
            let a = tasks[left], b = tasks[right]
            if a.priority != b.priority { return a.priority > b.priority }
            if a.criticalPath != b.criticalPath { return a.criticalPath > b.criticalPath }
            return left < right
        }
        var rank = [Int32](repeating: 0, count: tasks.count)
        for (position, index) in order.enumerated() { rank[index] = Int32(position) }
        let queueCount = max(queueLimits.count, (tasks.map(\.queue).max() ?? -1) + 1)
        readyByQueue = Array(repeating: RankedHeap(rank: rank), count: queueCount)
        executingByQueue = Array(repeating: 0, count: queueCount)
    }

    public var isFinished: Bool { terminalCount == tasks.count }

    /// Makes the tasks that need nothing ready; call once before the first `take`.
    public mutating func begin() -> [Transition] {
        var transitions: [Transition] = []
        for index in tasks.indices where tasks[index].needs.isEmpty {
            settle(index, into: &transitions)
        }
        return transitions
    }

    /// The ready tasks that may start now, best first, marked executing; respects `jobs` and each
    /// queue's limit. O(queues) per task taken.
    public mutating func take() -> [Int] {
        var started: [Int] = []
        while executingCount < jobs {
            var best: (queue: Int, task: Int)?
            for queue in readyByQueue.indices where executingByQueue[queue] < limit(of: queue) {
                guard let head = readyByQueue[queue].first else { continue }
                if let current = best, !readyByQueue[queue].isBefore(head, current.task) { continue }
                best = (queue, head)
            }
            guard let best else { break }
            _ = readyByQueue[best.queue].pop()
            states[best.task] = .executing
            executingCount += 1
            executingByQueue[best.queue] += 1
            started.append(best.task)
        }
        return started
    }

    /// Records how an executing (or ready) task ended and decides what follows for its dependents.
    public mutating func record(_ index: Int, _ outcome: Outcome) -> [Transition] {
        var transitions: [Transition] = []
        let previous = states[index]
        guard !previous.isTerminal else { return transitions }
        if previous == .executing {
            executingCount -= 1
            executingByQueue[tasks[index].queue] -= 1
        }
        finish(index, as: outcome, into: &transitions)
        if outcome == .failed, !tasks[index].allowsFailure, !keepGoing, !isStopping {
            isStopping = true
            cancelReady(into: &transitions)
        }
        return transitions
    }

    /// Stops the run (SIGINT/SIGTERM): no new task starts, what is ready or pending is cancelled, except
    /// `when: always` tasks, which still run once their needs are done.
    public mutating func cancel() -> [Transition] {
        var transitions: [Transition] = []
        guard !isCancelled else { return transitions }
        isCancelled = true
        isStopping = true
        cancelReady(into: &transitions)
        return transitions
    }

    // MARK: - Rules

    private func limit(of queue: Int) -> Int { queue < queueLimits.count ? queueLimits[queue] : jobs }

    /// All needs are done: the task becomes ready, or is skipped or cancelled by the `when` rules.
    private mutating func settle(_ index: Int, into transitions: inout [Transition]) {
        let task = tasks[index]
        let runs: Bool
        switch task.when {
        case .success: runs = !needUnsatisfied[index]
        case .failure: runs = needFailed[index]
        case .always: runs = true
        }
        if !runs {
            let cancelled = needCancelled[index] && task.when == .success
            finish(index, as: cancelled ? .cancelled : .skipped, into: &transitions)
        } else if isStopping && task.when == .success {
            finish(index, as: .cancelled, into: &transitions)
        } else {
            transitions.append(Transition(task: index, from: states[index], to: .ready))
            states[index] = .ready
            readyByQueue[task.queue].push(index)
        }
    }

    private mutating func finish(_ index: Int, as outcome: Outcome, into transitions: inout [Transition]) {
        let state: TaskState = switch outcome {
        case .succeeded: .succeeded
        case .failed: .failed
        case .skipped: .skipped
        case .upToDate: .upToDate
        case .cancelled: .cancelled
        }
        transitions.append(Transition(task: index, from: states[index], to: state))
        states[index] = state
        terminalCount += 1
        let allowedFailure = outcome == .failed && tasks[index].allowsFailure
        for dependent in dependents[index] {
            let dependent = Int(dependent)
            switch outcome {
            case .succeeded, .upToDate: break
            case .failed:
                needFailed[dependent] = true
                if !allowedFailure { needUnsatisfied[dependent] = true }
            case .skipped: needUnsatisfied[dependent] = true
            case .cancelled:
                needUnsatisfied[dependent] = true
                needCancelled[dependent] = true
            }
            unfinishedNeeds[dependent] -= 1
            if unfinishedNeeds[dependent] == 0 { settle(dependent, into: &transitions) }
        }
    }

    /// Cancels every ready task that is not `when: failure` or `always`; their dependents settle in turn.
    private mutating func cancelReady(into transitions: inout [Transition]) {
        for queue in readyByQueue.indices {
            for index in readyByQueue[queue].removeAll() {
                if tasks[index].when == .success {
                    finish(index, as: .cancelled, into: &transitions)
                } else {
                    readyByQueue[queue].push(index)
                }
            }
        }
    }
}
