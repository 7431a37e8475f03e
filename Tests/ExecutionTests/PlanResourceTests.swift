import JobGraphBasics
import PipelineModel
import TaskGraph
import Testing
@testable import Execution

private typealias Task = Plan.Task

private func mem(_ amount: Int64) -> [Plan.Demand] { [Plan.Demand(resource: 0, amount: amount)] }

/// The Plan's resource rules (docs/pipeline.md, "Resources"): a task starts only when what it asks is
/// free, the best ready task is never passed by one that would take what it waits for, and what a task
/// holds is free again when it ends, however it ends.
@Suite struct PlanResourceTests {
    @Test func aTaskStartsOnlyWhenWhatItAsksForIsFree() {
        var plan = Plan(tasks: [
            Task(id: "a", criticalPath: 3, demands: mem(6)), Task(id: "b", criticalPath: 2, demands: mem(6)),
            Task(id: "c", criticalPath: 1, demands: mem(3)),
        ], jobs: 4, queueLimits: [4], keepGoing: false, resourceTotals: [10])
        _ = plan.begin()
        // `b` does not fit beside `a`; `c` would fit, but it would take what `b`, the best ready task, waits for.
        #expect(plan.take().started == [0])
        #expect(plan.resourcesInUse == [6])
        #expect(plan.take().started.isEmpty)
        _ = plan.record(0, .succeeded)
        #expect(plan.take().started == [1, 2])
        #expect(plan.resourcesInUse == [9])
    }

    @Test func smallerTasksFillOnlyWhatTheWaitingHeadDoesNotNeed() {
        var plan = Plan(tasks: [
            Task(id: "big1", criticalPath: 9, demands: mem(6)), Task(id: "big2", criticalPath: 8, demands: mem(6)),
            Task(id: "s1"), Task(id: "s2"), Task(id: "s3"), Task(id: "m", demands: mem(1)),
        ], jobs: 4, queueLimits: [4], keepGoing: false, resourceTotals: [8])
        _ = plan.begin()
        // `big2` waits for memory and one slot; two of the three other slots go to tasks that ask no
        // memory, and `m`, which asks for memory the head waits for, does not start.
        #expect(plan.take().started == [0, 2, 3])
        #expect(plan.executingCount == 3)
        _ = plan.record(2, .succeeded)
        #expect(plan.take().started == [4])
        _ = plan.record(0, .succeeded)
        #expect(plan.take().started == [1, 5])
        #expect(plan.resourcesInUse == [7])
    }

    @Test func aBigTaskIsNotStarvedByAStreamOfSmallOnes() {
        // Two slots; `big` needs both (cpus 2) and is the best ready task once `s0` ends; the small ones
        // always have one slot they could take.
        let smalls = (0..<20).map { Task(id: TaskID("s\($0)"), criticalPath: 1) }
        var plan = Plan(tasks: smalls + [Task(id: "big", criticalPath: 2, needs: [0], weight: 2)],
                        jobs: 2, queueLimits: [2], keepGoing: false)
        _ = plan.begin()
        var running = plan.take().started
        var order: [String] = []
        while !running.isEmpty {
            let next = running.removeFirst()
            order.append(plan.tasks[next].id.rawValue)
            _ = plan.record(next, .succeeded)
            running += plan.take().started
        }
        // `big` is ready once `s0` ends; it starts as soon as `s1` has ended too, with 18 small ones still waiting.
        #expect(order.firstIndex(of: "big") == 2)
        #expect(order.count == 21)
    }

    @Test func whatATaskHoldsIsFreeAgainWhateverItsEnd() {
        for outcome in [Plan.Outcome.succeeded, .failed, .cancelled, .skipped] {
            var plan = Plan(tasks: [Task(id: "a", weight: 2, demands: mem(5)), Task(id: "b", demands: mem(5))],
                            jobs: 2, queueLimits: [2], keepGoing: true, resourceTotals: [5])
            _ = plan.begin()
            #expect(plan.take().started == [0])
            #expect(plan.executingCount == 2 && plan.resourcesInUse == [5])
            _ = plan.record(0, outcome)
            #expect(plan.executingCount == 0 && plan.resourcesInUse == [0], "\(outcome)")
            #expect(plan.take().started == [1], "\(outcome)")
        }
    }

    @Test func aCancelledRunFreesWhatItsTasksHeldAsTheyEnd() {
        var plan = Plan(tasks: [Task(id: "a", demands: mem(4)), Task(id: "b", demands: mem(4))],
                        jobs: 2, queueLimits: [2], keepGoing: false, resourceTotals: [8])
        _ = plan.begin()
        #expect(plan.take().started == [0, 1])
        _ = plan.cancel()
        _ = plan.record(0, .cancelled)
        _ = plan.record(1, .failed)
        #expect(plan.resourcesInUse == [0] && plan.executingCount == 0 && plan.isFinished)
    }

    @Test func theItemsOfAFanOutEachHoldWhatTheTaskAsks() {
        var plan = Plan(tasks: [Task(id: "map", weight: 1, isFanOut: true, demands: mem(3))],
                        jobs: 4, queueLimits: [4], keepGoing: false, resourceTotals: [7])
        _ = plan.begin()
        #expect(plan.takeRequests().expand == [0])
        let item = plan.tasks[0]
        let items = (0..<3).map { index -> Task in
            var copy = item
            copy.id = TaskID("map[\(index)]")
            copy.isFanOut = false
            return copy
        }
        let added = plan.expand(0, items: items).indices
        // The fan-out itself holds nothing; two items of 3 fit in 7.
        #expect(plan.take().started == Array(added.prefix(2)))
        #expect(plan.resourcesInUse == [6])
    }

    @Test func theGraphsPlanHoldsEachTasksCPUsAsSlotsAndItsLimitedResources() throws {
        var diagnostics = Diagnostics()
        let graph = try #require(PipelineCheck.graph(yaml: """
            version: 1
            tasks:
              wide: {run: "true", resources: {cpus: 2, mem: 8G, licences: 1}}
              pair: {parallel: ["true", "true"], resources: {cpus: 2}}
              huge: {run: "true", resources: {mem: 64G}}
            """, file: "p.yaml", diagnostics: &diagnostics), "\(diagnostics.all)")
        let totals = Resources([.init(name: "mem", value: 16 << 30)])
        let plan = Plan(graph: graph, layout: QueueLayout(graph: graph, jobs: 8, processorCount: 8), jobs: 8, keepGoing: false,
                        resources: totals)
        #expect(plan.resourceTotals == [16 << 30])
        #expect(plan.tasks.map(\.weight) == [2, 4, 1])
        // `licences` has no total, so it limits nothing; `huge` asks more than the total, which the run
        // refuses before it starts, and the Plan holds it to the total rather than waiting for ever.
        #expect(plan.tasks.map(\.demands) == [[Plan.Demand(resource: 0, amount: 8 << 30)], [], [Plan.Demand(resource: 0, amount: 16 << 30)]])
    }

    // MARK: - Retries that hold more (`retry_scale`, docs/pipeline.md "Retries")

    @Test func aRetryAskingMoreWaitsForRoomAndNoReadyTaskTakesItMeanwhile() {
        var plan = Plan(tasks: [
            Task(id: "a", criticalPath: 4, demands: mem(4)), Task(id: "b", criticalPath: 3, demands: mem(4)),
            Task(id: "c", criticalPath: 2, demands: mem(2)), Task(id: "d", criticalPath: 1, demands: mem(1)),
        ], jobs: 4, queueLimits: [4], keepGoing: false, resourceTotals: [10])
        _ = plan.begin()
        #expect(plan.take().started == [0, 1, 2])
        // `a` fails; its second attempt asks twice the memory: 6 are held beside it, so it waits.
        #expect(plan.retry(0, holding: Plan.Holding(weight: 1, demands: mem(8))) == .waiting)
        #expect(plan.resourcesInUse == [6])
        // `d` would fit in what is free, but that is what the retry waits for.
        #expect(plan.take().started.isEmpty)
        #expect(plan.takeRequests().retries.isEmpty)
        _ = plan.record(1, .succeeded)
        #expect(plan.take().started.isEmpty)
        #expect(plan.takeRequests().retries == [0])
        #expect(plan.resourcesInUse == [10] && plan.holding(of: 0).demands == mem(8))
        // What the retry holds is free again when it ends.
        _ = plan.record(0, .succeeded)
        #expect(plan.take().started == [3])
        #expect(plan.resourcesInUse == [3])
    }

    @Test func aRetryThatFitsHoldsItsNewAmountsAtOnceAndOneWithTheSameAmountsHoldsOn() {
        var plan = Plan(tasks: [Task(id: "a", demands: mem(2)), Task(id: "b", demands: mem(2))],
                        jobs: 4, queueLimits: [4], keepGoing: false, resourceTotals: [10])
        _ = plan.begin()
        #expect(plan.take().started == [0, 1])
        #expect(plan.retry(1, holding: Plan.Holding(weight: 1, demands: mem(2))) == .same)
        #expect(plan.resourcesInUse == [4] && plan.executingCount == 2)
        #expect(plan.retry(0, holding: Plan.Holding(weight: 2, demands: mem(8))) == .changed)
        #expect(plan.resourcesInUse == [10] && plan.executingCount == 3)
        #expect(plan.takeRequests().retries.isEmpty)
    }

    @Test func aRetryWaitingForSlotsStartsOnceTheyAreFree() {
        var plan = Plan(tasks: [Task(id: "a"), Task(id: "b")], jobs: 2, queueLimits: [2], keepGoing: false)
        _ = plan.begin()
        #expect(plan.take().started == [0, 1])
        // `cpus` scaled to 2: both slots, one of them `b`'s.
        #expect(plan.retry(0, holding: Plan.Holding(weight: 2, demands: [])) == .waiting)
        #expect(plan.executingCount == 1)
        _ = plan.record(1, .succeeded)
        _ = plan.take()
        #expect(plan.takeRequests().retries == [0])
        #expect(plan.executingCount == 2)
    }

    @Test func retriesWaitingForEachOthersRoomAreHandedItInTurn() {
        // Both fail at once and each retry asks the whole total: the first waits for the second's room, the
        // second waits behind the first, holding nothing; the next `take` hands the first its room.
        var plan = Plan(tasks: [Task(id: "a", demands: mem(2)), Task(id: "b", demands: mem(2))],
                        jobs: 2, queueLimits: [2], keepGoing: false, resourceTotals: [4])
        _ = plan.begin()
        #expect(plan.take().started == [0, 1])
        #expect(plan.retry(0, holding: Plan.Holding(weight: 1, demands: mem(4))) == .waiting)
        #expect(plan.retry(1, holding: Plan.Holding(weight: 1, demands: mem(4))) == .waiting)
        #expect(plan.resourcesInUse == [0])
        _ = plan.take()
        #expect(plan.takeRequests().retries == [0])
        _ = plan.record(0, .succeeded)
        _ = plan.take()
        #expect(plan.takeRequests().retries == [1])
        #expect(plan.resourcesInUse == [4])
    }

    @Test func aRetryWaitingForRoomThatEndsHeldNothingAndIsNotHandedOverLater() {
        var plan = Plan(tasks: [Task(id: "a", demands: mem(4)), Task(id: "b", demands: mem(4))],
                        jobs: 2, queueLimits: [2], keepGoing: true, resourceTotals: [8])
        _ = plan.begin()
        #expect(plan.take().started == [0, 1])
        #expect(plan.retry(0, holding: Plan.Holding(weight: 1, demands: mem(8))) == .waiting)
        // A stop ends the waiting retry cancelled.
        _ = plan.cancel()
        _ = plan.record(0, .cancelled)
        #expect(plan.resourcesInUse == [4] && plan.executingCount == 1)
        _ = plan.record(1, .succeeded)
        _ = plan.take()
        #expect(plan.takeRequests().retries.isEmpty)
        #expect(plan.resourcesInUse == [0] && plan.executingCount == 0 && plan.isFinished)
    }

    @Test func eachAttemptHoldsItsScaledAmountsAtMostTheTotalsAndSaysSoBeyondThem() throws {
        var diagnostics = Diagnostics()
        let graph = try #require(PipelineCheck.graph(yaml: """
            version: 1
            tasks:
              align: {run: "true", retries: 3, retry_scale: {mem: 2, cpus: 2}, resources: {mem: 3G}}
              plain: {run: "true", retries: 1, retry_scale: {time: 2}}
              group: {parallel: ["true", "true", "true", "true", "true", "true"], retries: 1, retry_scale: {mem: 2}, resources: {mem: 1G}}
            """, file: "p.yaml", diagnostics: &diagnostics), "\(diagnostics.all)")
        let limited = LimitedResources(totals: Resources([.init(name: "mem", value: 12 << 30)]))
        let spec = graph.nodes[0].spec
        #expect(limited.holding(of: spec, attempt: 1, jobs: 4) == Plan.Holding(weight: 1, demands: mem(3 << 30)))
        #expect(limited.holding(of: spec, attempt: 2, jobs: 4) == Plan.Holding(weight: 2, demands: mem(6 << 30)))
        #expect(limited.holding(of: spec, attempt: 3, jobs: 4) == Plan.Holding(weight: 4, demands: mem(12 << 30)))
        #expect(limited.holding(of: spec, attempt: 4, jobs: 4) == Plan.Holding(
            weight: 8, demands: mem(12 << 30),
            note: "asks cpus 8, more than the 4 total: holds 4; asks mem 24G, more than the 12G total: holds 12G"))
        #expect(limited.amounts(slots: 4, demands: mem(12 << 30)) == Resources([.init(name: "cpus", value: 4), .init(name: "mem", value: 12 << 30)]))
        // No `mem` or `cpus` factor: every attempt holds the same.
        #expect(limited.holding(of: graph.nodes[1].spec, attempt: 2, jobs: 4) == Plan.Holding(weight: 1, demands: []))
        // Six processes on 4 slots hold 4 on every attempt: nothing the retry's scaling asked, so no note.
        #expect(limited.holding(of: graph.nodes[2].spec, attempt: 2, jobs: 4) == Plan.Holding(weight: 6, demands: mem(2 << 30)))
    }
}
