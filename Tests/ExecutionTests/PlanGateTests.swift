import PipelineModel
import Testing
@testable import Execution

private typealias Task = Plan.Task

/// The Advanced NSOperations gates of the `Plan`, pure: conditions (`waiting` until checked), mutual
/// exclusivity by category, parallel weights, services released when ready, and dynamic fan-outs.
@Suite struct PlanGateTests {
    // MARK: - Conditions

    @Test func aTaskWithConditionsWaitsUntilTheyAreCheckedThenBecomesReady() {
        var plan = Plan(tasks: [Task(id: "gated", hasConditions: true)], jobs: 2, queueLimits: [2], keepGoing: false)
        #expect(plan.begin() == [Plan.Transition(task: 0, from: .pending, to: .waiting)])
        #expect(plan.takeRequests().checkConditions == [0])
        #expect(plan.take().started.isEmpty)
        #expect(plan.conditionsChecked(0, met: true) == [Plan.Transition(task: 0, from: .waiting, to: .ready)])
        #expect(plan.take().started == [0])
    }

    @Test func anUnmetConditionSkipsTheTaskAndItsSuccessDependentsButNotFailureOrAlwaysOnes() {
        var plan = Plan(tasks: [
            Task(id: "gated", hasConditions: true), Task(id: "after", needs: [0]),
            Task(id: "rescue", when: .failure, needs: [0]), Task(id: "cleanup", when: .always, needs: [0]),
        ], jobs: 2, queueLimits: [2], keepGoing: false)
        _ = plan.begin()
        _ = plan.takeRequests()
        _ = plan.conditionsChecked(0, met: false)
        #expect(plan.states == [.skipped, .skipped, .skipped, .ready])
        // A skip is no failure: nothing stops.
        #expect(!plan.isStopping)
        #expect(plan.take().started == [3])
    }

    @Test func aFanOutWithConditionsReadsItsListOnceTheyHoldAndItsItemsDoNotCheckAgain() {
        var plan = Plan(tasks: [Task(id: "photo", hasConditions: true, isFanOut: true)], jobs: 2, queueLimits: [2], keepGoing: false)
        _ = plan.begin()
        #expect(plan.takeRequests().checkConditions == [0])
        #expect(plan.conditionsChecked(0, met: true) == [
            Plan.Transition(task: 0, from: .waiting, to: .ready), Plan.Transition(task: 0, from: .ready, to: .executing),
        ])
        #expect(plan.takeRequests().expand == [0])
        #expect(plan.take().started.isEmpty)
        let items = (0..<2).map { Task(id: TaskID("photo[\($0)]")) }
        let (added, _) = plan.expand(0, items: items)
        #expect(added == 1..<3)
        #expect(plan.states[1...] == [.ready, .ready])
        #expect(plan.takeRequests().checkConditions.isEmpty)
    }

    // MARK: - Exclusivity

    @Test func tasksSharingACategoryExecuteOneAtATimeBestPriorityFirst() {
        // Four queues, four jobs: only the category keeps them apart.
        let priorities: [Priority] = [.low, .veryHigh, .normal, .high]
        var plan = Plan(tasks: priorities.indices.map { Task(id: TaskID("t\($0)"), queue: $0, priority: priorities[$0], categories: [0]) },
                        jobs: 4, queueLimits: [1, 1, 1, 1], keepGoing: false)
        _ = plan.begin()
        var order: [Int] = []
        var running = plan.take()
        // The best one starts; the rest wait for the category, in the order they were set aside.
        #expect(running.started == [1])
        #expect(running.transitions == [3, 2, 0].map { Plan.Transition(task: $0, from: .ready, to: .waiting) })
        while let current = running.started.first {
            #expect(running.started.count == 1)
            order.append(current)
            let released = plan.record(current, .succeeded)
            #expect(released.dropFirst().allSatisfy { $0.from == .waiting && $0.to == .ready })
            running = plan.take()
        }
        #expect(order == [1, 3, 2, 0])
        #expect(plan.isFinished)
    }

    /// Tasks holding one, the other or both of two categories, finished in different orders: whoever
    /// runs, no category is ever held twice and every task ends.
    @Test(arguments: [
        [[0, 1], [0], [1], [1, 0]],
        [[0], [0, 1], [1], [1, 0]],
        [[1], [0], [0, 1], [1, 0]],
        [[1, 0], [1], [0], [0, 1], [0], [1]],
        [[0], [1], [0, 1], [1, 2], [2, 0], [2]],
    ], [false, true])
    func severalCategoriesNeverDeadlockWhateverTheOrder(categories: [[Int]], finishNewestFirst: Bool) {
        let priorities: [Priority] = [.normal, .high, .low, .veryHigh, .veryLow, .normal]
        let tasks = categories.indices.map { index in
            Task(id: TaskID("t\(index)"), queue: index, priority: priorities[index], categories: categories[index])
        }
        var plan = Plan(tasks: tasks, jobs: tasks.count, queueLimits: Array(repeating: 1, count: tasks.count), keepGoing: false)
        _ = plan.begin()
        var running: [Int] = []
        var steps = 0
        repeat {
            running += plan.take().started
            let held = running.flatMap { plan.tasks[$0].categories }
            #expect(held.count == Set(held).count, "a category held twice by \(running)")
            guard !running.isEmpty else { break }
            let next = finishNewestFirst ? running.removeLast() : running.removeFirst()
            _ = plan.record(next, .succeeded)
            steps += 1
        } while steps <= tasks.count
        #expect(plan.isFinished)
        #expect(plan.states.allSatisfy { $0 == .succeeded })
    }

    @Test func aTaskWaitingForACategoryIsCancelledWhenAFailureStopsTheRun() {
        var plan = Plan(tasks: [Task(id: "holder", priority: .high, categories: [0]), Task(id: "blocked", queue: 1, categories: [0])],
                        jobs: 2, queueLimits: [1, 1], keepGoing: false)
        _ = plan.begin()
        #expect(plan.take().started == [0])
        #expect(plan.states[1] == .waiting)
        _ = plan.record(0, .failed)
        #expect(plan.states[1] == .cancelled)
        #expect(plan.isFinished)
    }

    // MARK: - Parallel weights

    @Test func aParallelGroupTakesOneSlotPerProcessUpToJobs() {
        var plan = Plan(tasks: [
            Task(id: "group", priority: .high, weight: 2), Task(id: "one"), Task(id: "two"),
        ], jobs: 3, queueLimits: [3], keepGoing: false)
        _ = plan.begin()
        #expect(plan.take().started == [0, 1])
        #expect(plan.executingCount == 3)
        _ = plan.record(1, .succeeded)
        #expect(plan.take().started == [2])

        var wide = Plan(tasks: [Task(id: "wide", weight: 8), Task(id: "other", priority: .low)], jobs: 3, queueLimits: [3], keepGoing: false)
        _ = wide.begin()
        // More processes than jobs: it takes every slot, not more, and runs alone.
        #expect(wide.take().started == [0])
        #expect(wide.executingCount == 3)
        _ = wide.record(0, .succeeded)
        #expect(wide.executingCount == 0)
        #expect(wide.take().started == [1])
    }

    @Test func aParallelGroupWaitsForFreeSlotsRatherThanBeingPassedByLighterTasks() {
        var plan = Plan(tasks: [
            Task(id: "first", priority: .veryHigh), Task(id: "group", priority: .high, weight: 2), Task(id: "light", priority: .low),
        ], jobs: 2, queueLimits: [2], keepGoing: false)
        _ = plan.begin()
        #expect(plan.take().started == [0])
        #expect(plan.take().started.isEmpty)
        _ = plan.record(0, .succeeded)
        #expect(plan.take().started == [1])
        _ = plan.record(1, .succeeded)
        #expect(plan.take().started == [2])
    }

    // MARK: - Services

    @Test func aServiceReleasesItsDependentsWhenReadyAndIsStoppedWhenNoneRemain() {
        var plan = Plan(tasks: [
            Task(id: "server", isService: true), Task(id: "client", needs: [0]), Task(id: "other-client", needs: [0]),
            Task(id: "after", needs: [1]),
        ], jobs: 4, queueLimits: [4], keepGoing: false)
        _ = plan.begin()
        #expect(plan.take().started == [0])
        #expect(plan.states[1] == .pending)
        #expect(plan.serviceReady(0) == [1, 2].map { Plan.Transition(task: $0, from: .pending, to: .ready) })
        #expect(plan.take().started == [1, 2])
        _ = plan.record(1, .succeeded)
        #expect(plan.takeRequests().stopServices.isEmpty)
        _ = plan.record(2, .succeeded)
        #expect(plan.takeRequests().stopServices == [0])
        // Stopped as planned, the service ends as a success; a dependent's dependent never needed it.
        _ = plan.record(0, .succeeded)
        #expect(plan.states[0] == .succeeded)
        #expect(plan.take().started == [3])
    }

    @Test func aServiceThatEndsBeforeItIsReadySkipsItsDependents() {
        var plan = Plan(tasks: [Task(id: "server", isService: true), Task(id: "client", needs: [0])],
                        jobs: 2, queueLimits: [2], keepGoing: true)
        _ = plan.begin()
        _ = plan.take()
        _ = plan.record(0, .failed)
        #expect(plan.states == [.failed, .skipped])
    }

    @Test func aServiceThatDiesAfterItWasReadySkipsEveryDependentNotYetStarted() {
        var plan = Plan(tasks: [
            Task(id: "server", priority: .high, isService: true), Task(id: "gate"), Task(id: "client", needs: [0, 1]),
            Task(id: "running-client", needs: [0]), Task(id: "rescue", when: .failure, needs: [0, 1]),
        ], jobs: 3, queueLimits: [3], keepGoing: true)
        _ = plan.begin()
        #expect(plan.take().started == [0, 1])
        _ = plan.serviceReady(0)
        #expect(plan.take().started == [3])
        _ = plan.record(0, .failed)
        _ = plan.record(1, .succeeded)
        // `client` was still waiting for `gate` when the service died: it cannot work without it.
        #expect(plan.states[2] == .skipped)
        #expect(plan.states[4] == .ready)
        // What already runs ends on its own.
        #expect(plan.states[3] == .executing)
    }

    // MARK: - Dynamic fan-out

    @Test func itemsRunOnTheirQueueWithItsLimitAndTheFanOutEndsWithTheLastOne() {
        var plan = Plan(tasks: [
            Task(id: "list"), Task(id: "photo", queue: 1, needs: [0], isFanOut: true), Task(id: "album", needs: [1]),
        ], jobs: 4, queueLimits: [4, 2], keepGoing: false)
        _ = plan.begin()
        #expect(plan.take().started == [0])
        _ = plan.record(0, .succeeded)
        // The fan-out executes at once, holding no slot, and asks for its list.
        #expect(plan.states[1] == .executing)
        #expect(plan.executingCount == 0)
        #expect(plan.takeRequests().expand == [1])
        let items = (0..<5).map { Task(id: TaskID("photo[\($0)]"), queue: 1) }
        let (added, _) = plan.expand(1, items: items)
        #expect(added == 3..<8)
        var started = plan.take().started
        #expect(started == [3, 4])
        var order = started
        while let next = started.first {
            #expect(plan.states[2] == .pending, "album went ahead before every item ended")
            started.removeFirst()
            _ = plan.record(next, .succeeded)
            if plan.states[1] == .succeeded { break }
            let more = plan.take().started
            #expect(more.count <= 1)
            started += more
            order += more
        }
        #expect(order == Array(3..<8))
        #expect(plan.states[1] == .succeeded)
        #expect(plan.states[2] == .ready)
    }

    @Test func aFailedItemFailsTheFanOutWhileItsSiblingsStillRunWithKeepGoing() {
        var plan = Plan(tasks: [Task(id: "photo", isFanOut: true), Task(id: "album", needs: [0])], jobs: 1, queueLimits: [1], keepGoing: true)
        _ = plan.begin()
        _ = plan.expand(0, items: (0..<3).map { Task(id: TaskID("photo[\($0)]")) })
        while let next = plan.take().started.first {
            _ = plan.record(next, plan.tasks[next].id == "photo[1]" ? .failed : .succeeded)
        }
        #expect(plan.states == [.failed, .skipped, .succeeded, .failed, .succeeded])
    }

    @Test func anAllowedItemFailureLeavesTheFanOutSucceeded() {
        var plan = Plan(tasks: [Task(id: "photo", allowsFailure: true, isFanOut: true), Task(id: "album", needs: [0])],
                        jobs: 1, queueLimits: [1], keepGoing: false)
        _ = plan.begin()
        _ = plan.expand(0, items: (0..<2).map { Task(id: TaskID("photo[\($0)]"), allowsFailure: true) })
        while let next = plan.take().started.first {
            _ = plan.record(next, plan.tasks[next].id == "photo[0]" ? .failed : .succeeded)
        }
        #expect(plan.states == [.succeeded, .succeeded, .failed, .succeeded])
        #expect(!plan.isStopping)
    }

    @Test func anEmptyListEndsTheFanOutAtOnce() {
        var plan = Plan(tasks: [Task(id: "photo", isFanOut: true), Task(id: "album", needs: [0])], jobs: 1, queueLimits: [1], keepGoing: false)
        _ = plan.begin()
        _ = plan.expand(0, items: [])
        #expect(plan.states == [.succeeded, .ready])
    }
}
