import Foundation
import Testing
import Execution
import PipelineModel
@testable import Reporters

/// A board with a hand-driven clock, its writes captured.
private final class BoardHarness {
    let origin = ContinuousClock.now
    var offset = Duration.zero
    let output = CapturedWrites()
    var size = TerminalSize(columns: 80, rows: 24)
    var explains = false
    lazy var board = TTYBoard(sink: output, terminalSize: { [unowned self] in size },
                              clock: { [unowned self] in origin + offset }, explains: explains)

    func at(seconds: Double, _ event: RunEvent) {
        offset = .seconds(seconds)
        board.observe(event)
    }

    var screen: Screen {
        var screen = Screen()
        screen.apply(output.text)
        return screen
    }
}

private let summary = RunSummary(counts: [.succeeded: 1, .failed: 1], wallTime: 2, criticalPath: [], failures: [],
                                 stop: nil)

@Suite struct TTYBoardTests {
    @Test func aBurstOfTransitionsCostsAtMostTwoWrites() {
        let harness = BoardHarness()
        harness.at(seconds: 0, Events.started(taskCount: 500))
        for index in 0..<500 {  // 1,000 transitions over 50 ms
            let id = TaskID("t\(index)")
            harness.at(seconds: Double(index) * 0.0001, Events.transition(id, .ready, .executing, at: 0))
            harness.at(seconds: Double(index) * 0.0001 + 0.00005,
                       Events.transition(id, .executing, .succeeded, at: 0, duration: 0))
        }
        #expect(harness.output.writes.count <= 2)

        harness.at(seconds: 0.1, .output(task: "t0", line: "late line"))
        #expect(harness.output.writes.count <= 3)
        #expect(harness.screen.visibleLines == ["t0 | late line", "photos.yaml: 500/500 done, 0 running, 0.1s"])
    }

    @Test func rowsShowQueueElapsedAttemptAndDownloadProgress() {
        let harness = BoardHarness()
        harness.at(seconds: 0, Events.started())
        harness.at(seconds: 0, Events.transition("a", .ready, .executing, at: 0, queue: "network"))
        harness.at(seconds: 0.5, Events.transition("build", .failed, .executing, at: 0.5, attempt: 2))
        harness.at(seconds: 1, .progress(task: "a", bytes: 1536, total: 10240))
        harness.offset = .seconds(2.5)
        harness.board.tick()

        #expect(harness.screen.visibleLines == [
            "photos.yaml: 0/3 done, 2 running, 2.5s",
            "  a      network  2.5s  1.5 KiB / 10.0 KiB (15%)",
            "  build  default  2.0s  attempt 2",
        ])
        #expect(harness.screen.unknownEscapes.isEmpty)
    }

    @Test func tickAdvancesElapsedTimesOnlyOncePerInterval() {
        let harness = BoardHarness()
        harness.at(seconds: 0, Events.started())
        harness.at(seconds: 0.01, Events.transition("a", .ready, .executing, at: 0.01))
        let writes = harness.output.writes.count
        harness.offset = .seconds(0.05)
        harness.board.tick()
        #expect(harness.output.writes.count == writes)
        harness.offset = .seconds(61)
        harness.board.tick()
        #expect(harness.output.writes.count == writes + 1)
        #expect(harness.screen.visibleLines.first == "photos.yaml: 0/3 done, 1 running, 1m01s")
    }

    @Test func suspendedBannerShowsUntilResumed() {
        let harness = BoardHarness()
        harness.at(seconds: 0, Events.started())
        harness.at(seconds: 1, .suspended(true))
        #expect(harness.screen.visibleLines.contains("SUSPENDED — send SIGUSR2 to resume"))
        harness.at(seconds: 2, .suspended(false))
        #expect(!harness.screen.visibleLines.contains("SUSPENDED — send SIGUSR2 to resume"))
    }

    /// Issue 34: while the run waits for its cluster, the board says so under its header.
    @Test func whatTheRunWaitsForShowsUntilItWaitsNoMore() {
        let harness = BoardHarness()
        harness.at(seconds: 0, Events.started())
        harness.at(seconds: 1, .executorWaiting("waiting for Slurm allocation 123: Resources"))
        #expect(harness.screen.visibleLines.contains("waiting for Slurm allocation 123: Resources"))
        harness.at(seconds: 2, .executorWaiting(nil))
        #expect(!harness.screen.visibleLines.contains { $0.hasPrefix("waiting for Slurm") })
    }

    @Test func tasksRestoredFromTheOutputCacheAreCountedOnTheBoard() {
        let harness = BoardHarness()
        harness.at(seconds: 0, Events.started(taskCount: 3))
        harness.at(seconds: 0.2, Events.transition("a", .ready, .executing, at: 0.2))
        harness.at(seconds: 0.3, Events.transition("b", .ready, .executing, at: 0.3))
        harness.at(seconds: 0.4, Events.transition("a", .executing, .restored, at: 0.4, duration: 0.2))
        harness.offset = .seconds(0.9)
        harness.board.tick()
        #expect(harness.screen.visibleLines.contains("photos.yaml: 1/3 done, 1 running, 1 restored, 0.9s"), "\(harness.screen.visibleLines)")
    }

    @Test func failuresAndOutputStayAboveTheBoardAndTheBoardIsGoneAtTheEnd() throws {
        let harness = BoardHarness()
        harness.at(seconds: 0, Events.started(taskCount: 2))
        harness.at(seconds: 0.2, Events.transition("test", .ready, .executing, at: 0.2))
        harness.at(seconds: 0.4, Events.transition("lint", .ready, .executing, at: 0.4))
        harness.at(seconds: 0.8, .output(task: "test", line: "expected 2, got 3"))
        harness.at(seconds: 0.81, Events.transition("test", .executing, .failed, at: 0.81, exitCode: 1, duration: 0.61))
        #expect(!harness.output.text.contains("failed"), "10 ms after the last redraw: in memory only")
        harness.offset = .seconds(0.9)
        harness.board.tick()
        #expect(harness.screen.visibleLines == [
            "test | expected 2, got 3",
            "[  0.81s] test  executing -> failed  (0.61s, exit 1)",
            "photos.yaml: 1/2 done, 1 running, 1 failed, 0.9s",
            "  lint  default  0.5s",
        ])

        harness.at(seconds: 0.95, Events.transition("lint", .executing, .succeeded, at: 0.95, duration: 0.55))
        harness.at(seconds: 0.96, .finished(summary))
        let last = try #require(harness.output.writes.last)
        #expect(last.hasPrefix("\r\u{1B}[2A\u{1B}[J"))
        #expect(harness.screen.visibleLines == [
            "test | expected 2, got 3",
            "[  0.81s] test  executing -> failed  (0.61s, exit 1)",
        ])
        #expect(harness.screen.unknownEscapes.isEmpty)

        let writes = harness.output.writes.count
        harness.at(seconds: 5, .output(task: "lint", line: "after the end"))
        harness.board.tick()
        harness.board.close()
        #expect(harness.output.writes.count == writes)
    }

    /// `run --explain` on a terminal: each start's reason stays above the board, as a failure's line does.
    @Test func explainingKeepsALineWithEachReason() {
        let harness = BoardHarness()
        harness.explains = true
        harness.at(seconds: 0, Events.started(taskCount: 2))
        harness.at(seconds: 0.1, Events.transition("gen", .executing, .upToDate, at: 0.1, duration: 0, reason: "up-to-date"))
        harness.at(seconds: 0.2, Events.transition("use", .ready, .executing, at: 0.2, reason: "input 'a.txt' changed"))
        harness.offset = .seconds(0.5)
        harness.board.tick()
        #expect(harness.screen.visibleLines == [
            "[  0.10s] gen  executing -> up-to-date  (0.00s)",
            "[  0.20s] use  ready -> executing  (input 'a.txt' changed)",
            "photos.yaml: 1/2 done, 1 running, 0.5s",
            "  use  default  0.3s",
        ])
    }

    @Test func closeWithoutFinishedErasesTheBoard() {
        let harness = BoardHarness()
        harness.at(seconds: 0, Events.started())
        harness.at(seconds: 0.01, Events.transition("a", .ready, .executing, at: 0.01))
        harness.at(seconds: 0.02, .stopping(.terminate))
        harness.board.close()
        #expect(harness.screen.visibleLines == [
            "[  0.02s] terminated (SIGTERM): no new task starts; running tasks get SIGTERM, then SIGKILL after 5s",
        ])
    }

    @Test func theBoardFitsTheTerminal() {
        let harness = BoardHarness()
        harness.size = TerminalSize(columns: 30, rows: 6)
        harness.at(seconds: 0, Events.started(taskCount: 12))
        for index in 0..<12 {
            harness.at(seconds: 0, Events.transition(TaskID("a-very-long-task-name[\(index)]"), .ready, .executing,
                                                     at: 0))
        }
        harness.offset = .seconds(1)
        harness.board.tick()

        let lines = harness.screen.visibleLines
        #expect(lines.count == 5)
        #expect(lines.allSatisfy { $0.count <= 29 })
        #expect(lines.first == "photos.yaml: 0/12 done, 12 r…")
        #expect(lines.last == "  … and 9 more")
    }
}
