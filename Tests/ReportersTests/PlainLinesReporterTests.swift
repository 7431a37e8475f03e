import Foundation
import Testing
import Execution
import PipelineModel
@testable import Reporters

@Suite struct PlainLinesReporterTests {
    @Test func printsOneLinePerTransitionWithDurationsAndExitCodes() throws {
        let output = try ConsoleFile()
        let reporter = PlainLinesReporter(sink: output.console, now: { Events.start.addingTimeInterval(3) })
        for event in [
            Events.started(),
            Events.transition("compile[a]", .pending, .ready, at: 0.01),
            Events.transition("compile[a]", .ready, .executing, at: 0.03),
            RunEvent.output(task: "compile[a]", line: "Compiling main.swift"),
            Events.transition("compile[a]", .executing, .succeeded, at: 0.41, duration: 0.38),
            Events.transition("test", .executing, .failed, at: 1.02, exitCode: 1, duration: 0.6),
            Events.transition("test", .failed, .executing, at: 2.5, attempt: 2),
            Events.transition("test", .executing, .failed, at: 62.75, attempt: 2, error: "timed out after 1m",
                              duration: 60.25),
            Events.transition("lint", .pending, .skipped, at: 62.8),
            Events.transition("fetch", .executing, .failed, at: 1234.5, error: "connection refused", duration: 4000),
        ] {
            reporter.observe(event)
        }
        reporter.close()

        #expect(output.lines == [
            "[  0.00s] running photos.yaml: 3 tasks, at most 2 at once",
            "[  0.01s] compile[a]  pending -> ready",
            "[  0.03s] compile[a]  ready -> executing",
            "compile[a] | Compiling main.swift",
            "[  0.41s] compile[a]  executing -> succeeded  (0.38s)",
            "[  1.02s] test  executing -> failed  (0.60s, exit 1)",
            "[  2.50s] test  failed -> executing  (attempt 2)",
            "[ 62.75s] test  executing -> failed  (attempt 2, 1m00s, timed out after 1m)",
            "[ 62.80s] lint  pending -> skipped",
            "[1234.50s] fetch  executing -> failed  (1h06m, connection refused)",
        ])
    }

    /// `run --explain`: the reason ends the line; without it, lines stay as they were.
    @Test func explainingEndsALineWithItsReason() throws {
        let events = [
            Events.transition("gen", .ready, .executing, at: 0.01, reason: "up-to-date"),
            Events.transition("gen", .executing, .upToDate, at: 0.01, duration: 0, reason: "up-to-date"),
            Events.transition("use", .ready, .executing, at: 0.02, reason: "input 'a.txt' changed"),
            Events.transition("use", .executing, .succeeded, at: 0.5, exitCode: 0, duration: 0.48),
        ]
        let explained = try ConsoleFile(), plain = try ConsoleFile()
        let explaining = PlainLinesReporter(sink: explained.console, explains: true)
        let quiet = PlainLinesReporter(sink: plain.console)
        for event in events {
            explaining.observe(event)
            quiet.observe(event)
        }
        #expect(explained.lines == [
            "[  0.01s] gen  ready -> executing  (up-to-date)",
            "[  0.01s] gen  executing -> up-to-date  (0.00s)",
            "[  0.02s] use  ready -> executing  (input 'a.txt' changed)",
            "[  0.50s] use  executing -> succeeded  (0.48s, exit 0)",
        ])
        #expect(plain.lines == [
            "[  0.01s] gen  ready -> executing",
            "[  0.01s] gen  executing -> up-to-date  (0.00s)",
            "[  0.02s] use  ready -> executing",
            "[  0.50s] use  executing -> succeeded  (0.48s, exit 0)",
        ])
    }

    /// A task found up to date before the run gets no lines, as ninja prints nothing for what it need not
    /// build; `--explain` prints them. One checked at its start (`use` here) is shown as any task.
    @Test func aTaskUpToDateBeforeTheRunIsLeftOutUnlessExplained() throws {
        func beforeRun(_ event: RunEvent) -> RunEvent {
            guard case .transition(var transition) = event else { return event }
            transition.isUpToDateBeforeRun = true
            return .transition(transition)
        }
        let events = [
            beforeRun(Events.transition("gen", .pending, .ready, at: 0.01)),
            beforeRun(Events.transition("gen", .ready, .executing, at: 0.01, reason: "up-to-date")),
            beforeRun(Events.transition("gen", .executing, .upToDate, at: 0.01, duration: 0, reason: "up-to-date")),
            Events.transition("use", .ready, .executing, at: 0.02, reason: "up-to-date"),
            Events.transition("use", .executing, .upToDate, at: 0.03, duration: 0.01, reason: "up-to-date"),
        ]
        let explained = try ConsoleFile(), plain = try ConsoleFile()
        let explaining = PlainLinesReporter(sink: explained.console, explains: true)
        PlainLinesReporter(sink: plain.console).observe(batch: events)
        explaining.observe(batch: events)
        #expect(plain.lines == [
            "[  0.02s] use  ready -> executing",
            "[  0.03s] use  executing -> up-to-date  (0.01s)",
        ])
        #expect(explained.lines.count == 5 && explained.lines[1] == "[  0.01s] gen  ready -> executing  (up-to-date)",
                "\(explained.lines)")
    }

    @Test func suspendResumeAndStopAreStampedByTheWallClock() throws {
        let output = try ConsoleFile()
        var now = Events.start
        let reporter = PlainLinesReporter(sink: output.console, now: { now })
        reporter.observe(Events.started())
        now = Events.start.addingTimeInterval(3)
        reporter.observe(.suspended(true))
        now = Events.start.addingTimeInterval(4.5)
        reporter.observe(.suspended(false))
        reporter.observe(.progress(task: "fetch", bytes: 10, total: 100))
        now = Events.start.addingTimeInterval(5.25)
        reporter.observe(.stopping(.interrupt))
        reporter.observe(.stopping(.terminate))

        #expect(output.lines.dropFirst() == [
            "[  3.00s] queues suspended (SIGUSR2 resumes)",
            "[  4.50s] queues resumed",
            "[  5.25s] interrupted (SIGINT): no new task starts; running tasks get SIGTERM, then SIGKILL after 5s",
            "[  5.25s] terminated (SIGTERM): no new task starts; running tasks get SIGTERM, then SIGKILL after 5s",
        ])
    }

    /// Issue 34: a line each time what the run waits for on its cluster changes; none when it waits no more.
    @Test func whatTheRunWaitsForIsALineStampedByTheWallClock() throws {
        let output = try ConsoleFile()
        var now = Events.start
        let reporter = PlainLinesReporter(sink: output.console, now: { now })
        reporter.observe(Events.started())
        now = Events.start.addingTimeInterval(0.5)
        reporter.observe(.executorWaiting("waiting for Slurm allocation 123: Priority"))
        now = Events.start.addingTimeInterval(2)
        reporter.observe(.executorWaiting("waiting for Slurm allocation 123: Resources"))
        reporter.observe(.executorWaiting(nil))
        #expect(output.lines.dropFirst() == [
            "[  0.50s] waiting for Slurm allocation 123: Priority",
            "[  2.00s] waiting for Slurm allocation 123: Resources",
        ])
    }

    @Test func finishedPrintsNothingBecauseTheSummaryFollows() throws {
        let output = try ConsoleFile()
        let reporter = PlainLinesReporter(sink: output.console)
        reporter.observe(.finished(RunSummary(counts: [.succeeded: 1], wallTime: 1, criticalPath: [], failures: [],
                                              stop: nil)))
        #expect(output.text.isEmpty)
    }

    /// Events that arrive together (30,000 transitions start a no-op rerun of 10,000 tasks) reach the
    /// output in a few writes of whole lines, reading exactly as they do one event at a time.
    @Test(arguments: [OutputMode.prefixed, .grouped, .interleaved])
    func aBatchReadsAsItsEventsOneByOneInFewWrites(mode: OutputMode) throws {
        var events = [Events.started(taskCount: 2_001)]
        for index in 0..<2_000 {
            let task = TaskID("t\(index)")
            events += [Events.transition(task, .pending, .ready, at: 0.1), Events.transition(task, .ready, .executing, at: 0.1),
                       Events.transition(task, .executing, .upToDate, at: 0.2, duration: 0)]
        }
        events += [Events.transition("log", .ready, .executing, at: 0.3), RunEvent.output(task: "log", line: "said"),
                   Events.transition("log", .executing, .failed, at: 1.5, exitCode: 2, duration: 1.2)]
        let oneByOne = CapturedWrites(), batched = CapturedWrites()
        let single = PlainLinesReporter(sink: oneByOne, output: mode), batch = PlainLinesReporter(sink: batched, output: mode)
        for event in events { single.observe(event) }
        batch.observe(batch: events)
        #expect(batched.text == oneByOne.text)
        #expect(oneByOne.writes.count > 6_000)
        #expect(batched.writes.count <= batched.text.utf8.count / (1 << 16) + 1)
        #expect(batched.writes.allSatisfy { $0.hasSuffix("\n") }, "every write ends a line")
        #expect(batched.text.contains("[  1.50s] log  executing -> failed  (1.20s, exit 2)"))
    }

    @Test(arguments: [
        (0.0, "0.00s"), (0.384, "0.38s"), (59.99, "59.99s"), (59.996, "1m00s"), (125, "2m05s"), (3599.4, "59m59s"),
        (3600, "1h00m"), (7384, "2h03m"), (-1, "0.00s"), (Double.nan, "0.00s"),
    ])
    func durationsReadNaturally(seconds: Double, text: String) {
        #expect(RunText.duration(seconds) == text)
    }
}
