import PipelineModel
import Testing
@testable import Execution

private typealias Task = Plan.Task

/// Runs a plan in rounds of one time unit: each round starts what may start, then every started task
/// ends. Returns the round each task started in (from 1) and the rounds the run took.
private func inRounds(_ plan: inout Plan) -> (started: [String: Int], rounds: Int) {
    var started: [String: Int] = [:]
    _ = plan.begin()
    var round = 0
    while !plan.isFinished {
        round += 1
        let taken = plan.take().started
        if taken.isEmpty { break }
        for index in taken { started[plan.tasks[index].id.rawValue] = round }
        for index in taken { _ = plan.record(index, .succeeded) }
    }
    return (started, round)
}

/// Which ready task starts next (docs/pipeline.md, "Order of ready tasks"): the critical path when it
/// decides the end, else the task furthest along its chain.
@Suite struct ReadyOrderTests {
    /// `map[i]` → `sort[i]` → `index[i]` for `count` samples, then `call` over every index and `summary`;
    /// remaining critical paths counted in tasks, as a run without history ranks them.
    private static func samples(_ count: Int) -> [Task] {
        var tasks: [Task] = []
        for step in [(name: "map", path: 5.0), (name: "sort", path: 4), (name: "index", path: 3)] {
            for sample in 0..<count {
                let needs = tasks.count < count ? [] : [tasks.count - count]
                tasks.append(Task(id: TaskID("\(step.name)[\(sample)]"), criticalPath: step.path, needs: needs))
            }
        }
        tasks.append(Task(id: "call", criticalPath: 2, needs: Array(2 * count..<3 * count)))
        tasks.append(Task(id: "summary", criticalPath: 1, needs: [3 * count]))
        return tasks
    }

    @Test func aSamplesChainEndsBeforeTheLastMapStartsAndTheRunIsNoLonger() {
        var plan = Plan(tasks: Self.samples(20), jobs: 2, queueLimits: [2], keepGoing: false)
        let (started, rounds) = inRounds(&plan)
        // The first two chains run side by side from the start: their `index` in round 3.
        #expect(started["index[0]"] == 3 && started["index[1]"] == 3)
        #expect(started["index[0]"]! < started["map[19]"]!)
        // 60 sample tasks on 2 slots, then `call` and `summary`: as short as any order makes it.
        #expect(rounds == 32)
    }

    @Test func aLongChainThatDecidesTheEndGoesFirstEvenAfterShortTasksInTheFile() {
        // Ten short tasks, then a chain of ten: the chain alone takes as long as all the work over 2 slots.
        let short = (0..<10).map { Task(id: TaskID("short\($0)")) }
        let chain = (0..<10).map { (link: Int) -> Task in
            let needs: [Int] = link == 0 ? [] : [10 + link - 1]
            return Task(id: TaskID("link\(link)"), criticalPath: Double(10 - link), needs: needs)
        }
        var plan = Plan(tasks: short + chain, jobs: 2, queueLimits: [2], keepGoing: false)
        let (started, rounds) = inRounds(&plan)
        #expect(started["link0"] == 1)
        #expect(rounds == 10)
    }

    @Test func aLongChainAmongFarMoreWorkStartsLaterAndTheRunEndsAtTheBoundStill() {
        // 100 short tasks and a chain of ten: 110 tasks on 2 slots take 55 rounds whenever the chain starts,
        // as long as it starts by round 46.
        let short = (0..<100).map { Task(id: TaskID("short\($0)")) }
        let chain = (0..<10).map { (link: Int) -> Task in
            let needs: [Int] = link == 0 ? [] : [100 + link - 1]
            return Task(id: TaskID("link\(link)"), criticalPath: Double(10 - link), needs: needs)
        }
        var plan = Plan(tasks: short + chain, jobs: 2, queueLimits: [2], keepGoing: false)
        let (started, rounds) = inRounds(&plan)
        #expect(started["link0"]! > 1, "not urgent yet: the short tasks come first in the file")
        #expect(rounds == 55)
    }

    @Test func priorityComesBeforeAnUrgentPathAndADeeperTask() {
        var plan = Plan(tasks: [
            Task(id: "head", criticalPath: 3), Task(id: "deep", criticalPath: 2, needs: [0]), Task(id: "tail", criticalPath: 1, needs: [1]),
            Task(id: "now", priority: .high), Task(id: "other"),
        ], jobs: 1, queueLimits: [1], keepGoing: false)
        let (started, _) = inRounds(&plan)
        #expect(started["now"] == 1)
        #expect(started["head"] == 2)
    }
}
