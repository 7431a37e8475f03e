import Execution
import JobGraphBasics
import PipelineModel
import Testing
import TaskGraph
@testable import Reporters

/// The live board's line of resources in use against the totals (docs/pipeline.md, "Resources").
@Suite struct ResourceUseTests {
    @Test func theBoardShowsWhatExecutingTasksHoldAgainstTheTotals() throws {
        var diagnostics = Diagnostics()
        let graph = try #require(PipelineCheck.graph(yaml: """
            version: 1
            resources: {mem: 32G, gpus: 2}
            tasks:
              train: {run: "true", resources: {gpus: 1, mem: 8G}}
              map: {foreach: {from: samples.txt}, run: "true", resources: {cpus: 2, mem: 4G}}
              plain: {run: "true"}
            """, file: "p.yaml", diagnostics: &diagnostics))
        let totals = Resources.totals(declared: graph.pipeline.resources, option: nil, machineMemory: nil)
        let output = CapturedWrites()
        // A second passes at each event, so each one redraws.
        let origin = ContinuousClock.now
        let ticks = Locked(0)
        let board = TTYBoard(sink: output, terminalSize: { TerminalSize(columns: 80, rows: 24) },
                             clock: { origin + .seconds(ticks.withLock { count in
                                 count += 1
                                 return count
                             }) },
                             resourceUse: ResourceUse(graph: graph, totals: totals, jobs: 4))
        board.observe(Events.started(taskCount: 3, jobs: 4))
        for (task, from, to) in [("train", TaskState.ready, TaskState.executing), ("map", .ready, .executing),
                                 ("map[0]", .ready, .executing), ("plain", .ready, .executing), ("plain", .executing, .succeeded)] {
            board.observe(Events.transition(TaskID(task), from, to, at: 0))
        }
        // The fan-out `map` holds nothing itself; its item holds 2 cpus and 4G.
        #expect(output.text.contains("  cpus 3/4 · mem 12G/32G · gpus 1/2"), "\(output.text)")
    }
}
