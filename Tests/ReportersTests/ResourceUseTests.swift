import Execution
import JobGraphBasics
import PipelineModel
import Testing
@testable import Reporters

/// Resources in use against the totals (docs/pipeline.md, "Resources"): the live board's line, and the
/// report's peaks computed from the attempts' times.
@Suite struct ResourceUseTests {
    private static let totals = [ResourceTotal(name: "cpus", total: 4, source: .jobs),
                                 ResourceTotal(name: "mem", total: 32 << 30, source: .file),
                                 ResourceTotal(name: "gpus", total: 2, source: .file)]

    private static func held(cpus: Int64, mem: Int64 = 0, gpus: Int64 = 0) -> Resources {
        var amounts = [Resources.Amount(name: "cpus", value: cpus)]
        if mem > 0 { amounts.append(.init(name: "mem", value: mem)) }
        if gpus > 0 { amounts.append(.init(name: "gpus", value: gpus)) }
        return Resources(amounts)
    }

    @Test func theBoardShowsWhatExecutingAttemptsHoldAgainstTheTotals() throws {
        let output = CapturedWrites()
        // A second passes at each event, so each one redraws.
        let origin = ContinuousClock.now
        let ticks = Locked(0)
        let board = TTYBoard(sink: output, terminalSize: { TerminalSize(columns: 80, rows: 24) },
                             clock: { origin + .seconds(ticks.withLock { count in
                                 count += 1
                                 return count
                             }) },
                             resourceUse: ResourceUse(totals: Self.totals))
        board.observe(Events.started(taskCount: 3, jobs: 4))
        // A fan-out's transition says nothing held; its item's says what the item holds.
        let transitions: [RunEvent] = [
            Events.transition("train", .ready, .executing, at: 0, resources: Self.held(cpus: 1, mem: 8 << 30, gpus: 1)),
            Events.transition("map", .ready, .executing, at: 0),
            Events.transition("map[0]", .ready, .executing, at: 0, resources: Self.held(cpus: 2, mem: 4 << 30)),
            Events.transition("plain", .ready, .executing, at: 0, resources: Self.held(cpus: 1)),
            Events.transition("plain", .executing, .succeeded, at: 0),
        ]
        for event in transitions { board.observe(event) }
        #expect(output.text.contains("  cpus 3/4 · mem 12G/32G · gpus 1/2"), "\(output.text)")
        // A retry holds what its own transition says: here twice the memory.
        board.observe(Events.transition("map[0]", .executing, .failed, at: 1))
        board.observe(Events.transition("map[0]", .failed, .executing, at: 1, attempt: 2, resources: Self.held(cpus: 2, mem: 8 << 30)))
        #expect(output.text.contains("  cpus 3/4 · mem 16G/32G · gpus 1/2"), "\(output.text)")
    }

    @Test func thePeakIsTheMostHeldAtOnceOverTheAttemptsTimes() {
        let attempts = [
            TaskAttempt(task: "a", attempt: 1, queue: "default", slot: 0, start: 0, end: 4, outcome: .succeeded,
                        resources: Self.held(cpus: 2, mem: 8 << 30)),
            TaskAttempt(task: "b", attempt: 1, queue: "default", slot: 1, start: 1, end: 2, outcome: .failed,
                        resources: Self.held(cpus: 1, mem: 4 << 30, gpus: 1)),
            // Its retry, with twice the memory, from when the first attempt ended.
            TaskAttempt(task: "b", attempt: 2, queue: "default", slot: 1, start: 2, end: 5, outcome: .succeeded,
                        resources: Self.held(cpus: 1, mem: 8 << 30, gpus: 1)),
            // Starts at the instant `a` ends: not beside it.
            TaskAttempt(task: "c", attempt: 1, queue: "default", slot: 0, start: 4, end: 6, outcome: .succeeded,
                        resources: Self.held(cpus: 2, mem: 16 << 30)),
        ]
        #expect(ResourceUse.peaks(of: attempts, totals: Self.totals) == [3, 24 << 30, 1])
    }

    @Test func anAttemptThatNeverEndedHoldsToTheLastMomentAndOneWithoutAmountsHoldsNothing() {
        let attempts = [
            TaskAttempt(task: "killed", attempt: 1, queue: "default", slot: 0, start: 0, resources: Self.held(cpus: 1, gpus: 2)),
            TaskAttempt(task: "late", attempt: 1, queue: "default", slot: 1, start: 100, end: 101, outcome: .succeeded,
                        resources: Self.held(cpus: 3)),
            TaskAttempt(task: "unrecorded", attempt: 1, queue: "default", slot: 2, start: 100, end: 101, outcome: .succeeded),
        ]
        #expect(ResourceUse.peaks(of: attempts, totals: Self.totals) == [4, 0, 2])
        #expect(ResourceUse.peaks(of: [TaskAttempt](), totals: Self.totals) == [0, 0, 0])
    }

    @Test func aNameTheTotalsDoNotHaveCountsForNothing() {
        let attempt = TaskAttempt(task: "a", attempt: 1, queue: "default", slot: 0, start: 0, end: 1, outcome: .succeeded,
                                  resources: Resources([.init(name: "cpus", value: 1), .init(name: "licences", value: 5)]))
        #expect(ResourceUse.peaks(of: [attempt], totals: Self.totals) == [1, 0, 0])
    }
}
