import PipelineModel
import Testing
@testable import Execution

private typealias Task = Plan.Task

/// Runs a plan to the end, finishing tasks in the order they start with the given outcomes,
/// and returns the start order and final states.
private func drive(_ plan: inout Plan, outcomes: [String: Plan.Outcome] = [:]) -> (started: [String], states: [String: TaskState]) {
    var started: [String] = []
    _ = plan.begin()
    var running: [Int] = []
    repeat {
        running += plan.take().started
        guard !running.isEmpty else { break }
        let next = running.removeFirst()
        let id = plan.tasks[next].id.rawValue
        started.append(id)
        _ = plan.record(next, outcomes[id] ?? .succeeded)
    } while true
    var states: [String: TaskState] = [:]
    for (index, task) in plan.tasks.enumerated() { states[task.id.rawValue] = plan.states[index] }
    return (started, states)
}

@Suite struct PlanTests {
    @Test func needsFinishBeforeTheirDependentsStart() {
        var plan = Plan(tasks: [
            Task(id: "c", needs: [1, 2]), Task(id: "a"), Task(id: "b", needs: [1]),
        ], jobs: 4, queueLimits: [4], keepGoing: false)
        let (started, states) = drive(&plan)
        #expect(started == ["a", "b", "c"])
        #expect(states.values.allSatisfy { $0 == .succeeded })
        #expect(plan.isFinished)
    }

    @Test func priorityThenCriticalPathThenFileOrderDecideWhoStartsFirst() {
        // `long` decides the end (5 of the 10 left once `urgent` has run), so it goes before `first`; `lazy`,
        // longer than `first` and `second`, still goes after them (docs/pipeline.md, "Order of ready tasks").
        var plan = Plan(tasks: [
            Task(id: "first", criticalPath: 1), Task(id: "long", criticalPath: 5),
            Task(id: "urgent", priority: .high, criticalPath: 1), Task(id: "second", criticalPath: 1),
            Task(id: "lazy", priority: .veryLow, criticalPath: 3),
        ], jobs: 1, queueLimits: [1], keepGoing: false)
        #expect(drive(&plan).started == ["urgent", "long", "first", "second", "lazy"])
    }

    @Test func jobsAndQueueLimitsAreNeverExceededAndAreReached() {
        let tasks = (0..<6).map { Task(id: TaskID("n\($0)"), queue: 0) } + (0..<6).map { Task(id: TaskID("c\($0)"), queue: 1) }
        var plan = Plan(tasks: tasks, jobs: 3, queueLimits: [1, 4], keepGoing: false)
        _ = plan.begin()
        let first = plan.take().started
        #expect(first.count == 3)
        #expect(first.filter { plan.tasks[$0].queue == 0 }.count == 1)
        #expect(plan.take().started.isEmpty)
        _ = plan.record(first[0], .succeeded)
        #expect(plan.take().started.count == 1)
    }

    @Test func aTaskThatRunsAloneWaitsForTheRunningOnesAndNothingStartsBesideIt() {
        // `console` ranks first; `a` and `b` already run when it becomes ready.
        var plan = Plan(tasks: [
            Task(id: "a"), Task(id: "b"), Task(id: "gate"), Task(id: "console", criticalPath: 9, needs: [2], runsAlone: true),
            Task(id: "c"), Task(id: "d"),
        ], jobs: 3, queueLimits: [3], keepGoing: false)
        _ = plan.begin()
        #expect(Set(plan.take().started) == [0, 1, 2])
        _ = plan.record(2, .succeeded)
        // Nothing passes the ready `console`, which waits for `a` and `b`.
        #expect(plan.take().started.isEmpty)
        _ = plan.record(0, .succeeded)
        #expect(plan.take().started.isEmpty)
        _ = plan.record(1, .succeeded)
        #expect(plan.take().started == [3])
        // Free slots stay free while it executes.
        #expect(plan.take().started.isEmpty)
        _ = plan.record(3, .succeeded)
        #expect(Set(plan.take().started) == [4, 5])
    }

    @Test func aReadyServiceRunsOnBesideATaskThatRunsAlone() {
        var plan = Plan(tasks: [
            Task(id: "server", isService: true), Task(id: "console", needs: [0], runsAlone: true), Task(id: "after", needs: [1]),
        ], jobs: 2, queueLimits: [2], keepGoing: false)
        _ = plan.begin()
        #expect(plan.take().started == [0])
        _ = plan.serviceReady(0)
        #expect(plan.take().started == [1])
        _ = plan.record(1, .succeeded)
        #expect(plan.take().started == [2])
    }

    @Test func aFailureSkipsDependentsAndStopsNewStartsButFailureAndAlwaysTasksRun() {
        var plan = Plan(tasks: [
            Task(id: "build"), Task(id: "test", needs: [0]), Task(id: "report", when: .failure, needs: [0]),
            Task(id: "cleanup", when: .always, needs: [1]), Task(id: "other", needs: [5]), Task(id: "slow"),
        ], jobs: 1, queueLimits: [1], keepGoing: false)
        let (started, states) = drive(&plan, outcomes: ["build": .failed])
        #expect(started == ["build", "report", "cleanup"])
        #expect(states["test"] == .skipped)
        #expect(states["slow"] == .cancelled)
        #expect(states["other"] == .cancelled)
        #expect(plan.isFinished)
    }

    @Test func keepGoingStartsWhatDoesNotDependOnTheFailure() {
        var plan = Plan(tasks: [Task(id: "build"), Task(id: "test", needs: [0]), Task(id: "lint")],
                        jobs: 1, queueLimits: [1], keepGoing: true)
        let (started, states) = drive(&plan, outcomes: ["build": .failed])
        #expect(started == ["build", "lint"])
        #expect(states["test"] == .skipped)
    }

    @Test func anAllowedFailureLetsDependentsRunAndDoesNotStopTheRun() {
        var plan = Plan(tasks: [Task(id: "flaky", allowsFailure: true), Task(id: "next", needs: [0]), Task(id: "other")],
                        jobs: 1, queueLimits: [1], keepGoing: false)
        let (started, states) = drive(&plan, outcomes: ["flaky": .failed])
        #expect(started == ["flaky", "next", "other"])
        #expect(states["flaky"] == .failed)
        #expect(!plan.isStopping)
    }

    @Test func aSkippedNeedSkipsSuccessDependents() {
        var plan = Plan(tasks: [Task(id: "gated"), Task(id: "after", needs: [0]), Task(id: "always", when: .always, needs: [1])],
                        jobs: 1, queueLimits: [1], keepGoing: false)
        let (started, states) = drive(&plan, outcomes: ["gated": .skipped])
        #expect(started == ["gated", "always"])
        #expect(states["after"] == .skipped)
    }

    @Test func cancellingCancelsWhatHasNotStartedButAlwaysTasksStillRun() {
        var plan = Plan(tasks: [Task(id: "a"), Task(id: "b", needs: [0]), Task(id: "c"), Task(id: "cleanup", when: .always, needs: [1])],
                        jobs: 1, queueLimits: [1], keepGoing: false)
        _ = plan.begin()
        let running = plan.take().started
        #expect(running == [0])
        let transitions = plan.cancel()
        #expect(transitions.map(\.to) == [.cancelled])
        _ = plan.record(0, .cancelled)
        #expect(plan.states[1] == .cancelled)
        #expect(plan.states[3] == .ready)
        #expect(plan.take().started == [3])
    }

    @Test func transitionsReportTheirOldState() {
        var plan = Plan(tasks: [Task(id: "a"), Task(id: "b", needs: [0])], jobs: 1, queueLimits: [1], keepGoing: false)
        #expect(plan.begin() == [Plan.Transition(task: 0, from: .pending, to: .ready)])
        _ = plan.take().started
        #expect(plan.record(0, .succeeded) == [
            Plan.Transition(task: 0, from: .executing, to: .succeeded), Plan.Transition(task: 1, from: .pending, to: .ready),
        ])
    }
}

@Suite struct PlanFanOutTests {
    @Test func itemConditionsOfAFanOutAreCheckedOnEachItem() {
        // The fan-out's own conditions are those without `{{ item }}`: here none, so it reads its list at once.
        var plan = Plan(tasks: [Task(id: "photos", isFanOut: true)], jobs: 2, queueLimits: [2], keepGoing: false)
        _ = plan.begin()
        let first = plan.takeRequests()
        #expect(first.expand == [0])
        #expect(first.checkConditions.isEmpty)
        let (items, _) = plan.expand(0, items: [Task(id: "photos[0]", hasConditions: true), Task(id: "photos[1]", hasConditions: true)])
        #expect(plan.takeRequests().checkConditions == Array(items))
        for item in items { _ = plan.conditionsChecked(item, met: item == items.first) }
        let started = plan.take().started
        #expect(started == [items.first!])
        _ = plan.record(started[0], .succeeded)
        #expect(plan.states[0] == .succeeded)
        #expect(plan.isFinished)
    }
}

/// Per-item needs met at run time (docs/pipeline.md, "Per-item chains").
@Suite struct PlanItemNeedsTests {
    /// `map` and `sort` read their lists at run time; `sort`'s items name `map`'s, `fixed` (known before
    /// the run) names `sort`'s item 0.
    private func chain(keepGoing: Bool = true) -> Plan {
        var plan = Plan(tasks: [
            Task(id: "map", isFanOut: true), Task(id: "sort", isFanOut: true), Task(id: "fixed[a]"),
        ], jobs: 4, queueLimits: [4], keepGoing: keepGoing)
        plan.waitForLists([1: [0], 2: [1]])
        return plan
    }

    @Test func aTaskWaitsForTheListItsItemNeedsNameThenForItsOwnItems() {
        var plan = chain()
        _ = plan.begin()
        #expect(plan.takeRequests().expand == [0])
        #expect(plan.states[1] == .pending && plan.states[2] == .pending)
        // `map` read: `sort` reads its list, while `map`'s items have not even started.
        let (maps, _) = plan.expand(0, items: [Task(id: "map[0]"), Task(id: "map[1]")])
        #expect(plan.states[1] == .executing)
        #expect(plan.takeRequests().expand == [1])
        #expect(plan.listWaiters(of: 1) == [2])
        var resolved = Plan.ItemNeeds()
        resolved.waiterNeeds = [2: [maps.upperBound]]  // `fixed[a]` needs `sort[0]`, the first item to come
        let (sorts, _) = plan.expand(1, items: [Task(id: "sort[0]", needs: [maps.lowerBound]), Task(id: "sort[1]", needs: [maps.lowerBound + 1])],
                                     resolved: resolved)
        #expect(sorts == 5..<7)
        #expect(plan.states[2] == .pending)
        #expect(plan.take().started == [3, 4])
        _ = plan.record(4, .failed)
        #expect(plan.states[6] == .skipped)
        _ = plan.record(3, .succeeded)
        #expect(plan.take().started == [5])
        _ = plan.record(5, .succeeded)
        #expect(plan.take().started == [2])
        _ = plan.record(2, .succeeded)
        #expect(plan.states[0] == .failed && plan.states[1] == .succeeded)
        #expect(plan.isFinished)
    }

    @Test func anItemCountsANeedThatEndedBeforeItWasAddedAsItEnded() {
        // `list` reads its items once `a` and `b` have ended, whatever their outcome (`when: always`).
        var plan = Plan(tasks: [Task(id: "a"), Task(id: "b"), Task(id: "list", when: .always, needs: [0, 1], isFanOut: true)],
                        jobs: 4, queueLimits: [4], keepGoing: true)
        _ = plan.begin()
        #expect(plan.take().started == [0, 1])
        _ = plan.record(0, .failed)
        _ = plan.record(1, .succeeded)
        let (items, _) = plan.expand(2, items: [Task(id: "list[0]", needs: [0]), Task(id: "list[1]", needs: [1])])
        #expect(plan.states[items.lowerBound] == .skipped)
        #expect(plan.states[items.lowerBound + 1] == .ready)
    }

    @Test func aListThatEndsUnreadSkipsTheTasksWaitingForIt() {
        var plan = chain()
        _ = plan.begin()
        _ = plan.takeRequests()
        let transitions = plan.record(0, .failed)
        #expect(transitions.contains(Plan.Transition(task: 1, from: .pending, to: .skipped)))
        #expect(plan.states[2] == .skipped)
        #expect(plan.isFinished)
    }

    @Test func anItemWhoseNeedNamedNoTaskFailsWhenItWouldStartAndStopsTheRunWithoutKeepGoing() {
        var plan = chain(keepGoing: false)
        _ = plan.begin()
        _ = plan.takeRequests()
        var resolved = Plan.ItemNeeds()
        resolved.unresolvedItems = [1]
        let (maps, transitions) = plan.expand(0, items: [Task(id: "map[0]"), Task(id: "map[1]")], resolved: resolved)
        #expect(transitions.contains(Plan.Transition(task: maps.lowerBound + 1, from: .pending, to: .failed)))
        #expect(plan.isStopping)
        #expect(plan.states[maps.lowerBound] == .cancelled)
    }
}
