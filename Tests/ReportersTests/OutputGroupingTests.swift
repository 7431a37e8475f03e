import Foundation
import Testing
import Execution
import PipelineModel
@testable import Reporters

/// The live board in each output mode: task lines go above the board, held per task in `grouped` mode.
@Suite struct OutputGroupingTests {
    private static func screen(_ mode: OutputMode, events: [RunEvent]) -> [String] {
        let output = CapturedWrites()
        let origin = ContinuousClock.now
        var offset = Duration.zero
        let board = TTYBoard(sink: output, terminalSize: { TerminalSize(columns: 80, rows: 24) },
                             clock: { origin + offset }, output: mode)
        for event in events {
            offset += .milliseconds(150)  // past the redraw interval: every event reaches the screen
            board.observe(event)
        }
        var screen = Screen()
        screen.apply(output.text)
        return screen.visibleLines
    }

    private static let events: [RunEvent] = [
        Events.started(taskCount: 2),
        Events.transition("a", .ready, .executing, at: 0),
        Events.transition("b", .ready, .executing, at: 0),
        .output(task: "a", line: "a1"),
        .output(task: "b", line: "b1"),
        .output(task: "a", line: "a2"),
        Events.transition("b", .executing, .failed, at: 0.5, exitCode: 2, duration: 0.5),
        .output(task: "a", line: "a3"),
    ]

    @Test func groupedShowsABlockWhenAnAttemptEndsAndTheRestAtTheEnd() {
        let running = Self.screen(.grouped, events: Self.events)
        #expect(running == [
            "[  0.50s] b  executing -> failed  (0.50s, exit 2)",
            "b1",
            "photos.yaml: 1/2 done, 1 running, 1 failed, 1.1s",
            "  a  default  0.9s",
        ])
        let ended = Self.screen(.grouped, events: Self.events + [
            Events.transition("a", .executing, .succeeded, at: 1, exitCode: 0, duration: 1),
            .finished(RunSummary(counts: [:], wallTime: 1, criticalPath: [], failures: [], stop: nil)),
        ])
        #expect(ended == [
            "[  0.50s] b  executing -> failed  (0.50s, exit 2)", "b1",
            "[  1.00s] a  executing -> succeeded  (1.00s, exit 0)", "a1", "a2", "a3",
        ])
    }

    @Test func aBlockWithoutAnEndIsShownWhenTheRunFinishes() {
        let ended = Self.screen(.grouped, events: Self.events + [
            .finished(RunSummary(counts: [:], wallTime: 1, criticalPath: [], failures: [], stop: .interrupt)),
        ])
        #expect(ended.suffix(4) == ["a  output of an attempt that did not report its end", "a1", "a2", "a3"])
    }

    @Test func prefixedAndInterleavedShowLinesAsTheyCome() {
        let prefixed = Self.screen(.prefixed, events: Self.events)
        #expect(prefixed.prefix(5) == ["a | a1", "b | b1", "a | a2", "[  0.50s] b  executing -> failed  (0.50s, exit 2)", "a | a3"])
        let interleaved = Self.screen(.interleaved, events: Self.events)
        #expect(interleaved.prefix(5) == ["a1", "b1", "a2", "[  0.50s] b  executing -> failed  (0.50s, exit 2)", "a3"])
    }
}
