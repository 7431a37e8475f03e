import JobGraphTestSupport
import PipelineModel
import Synchronization
import Testing
@testable import Execution

/// The live board hands the terminal to a task that uses it only once it has erased itself.
@Suite(.hangLimit(minutes: 1))
struct TerminalHandoffTests {
    @Test func withoutABoardNothingWaits() {
        let handoff = TerminalHandoff()
        handoff.waitForTerminal("ask") { false }
    }

    @Test func aTaskWaitsUntilTheBoardHasSteppedAsideForIt() async {
        let handoff = TerminalHandoff()
        handoff.boardShown()
        async let done: Void = onThreadOfItsOwn { handoff.waitForTerminal("ask") { false } }
        handoff.steppedAside(for: "other")
        handoff.steppedAside(for: "ask")
        await done
    }

    @Test func aStoppedTaskStopsWaiting() async {
        let handoff = TerminalHandoff()
        handoff.boardShown()
        let stopped = Atomic(false)
        async let done: Void = onThreadOfItsOwn { handoff.waitForTerminal("ask") { stopped.load(ordering: .sequentiallyConsistent) } }
        stopped.store(true, ordering: .sequentiallyConsistent)
        handoff.wakeWaiters()
        await done
    }

    @Test func aClosedBoardReleasesEveryWaiter() async {
        let handoff = TerminalHandoff()
        handoff.boardShown()
        async let done: Void = onThreadOfItsOwn { handoff.waitForTerminal("ask") { false } }
        handoff.boardClosed()
        await done
    }
}
