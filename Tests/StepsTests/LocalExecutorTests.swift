import Execution
import Foundation
import JobGraphSystem
import JobGraphTestSupport
import Testing

/// What `LocalExecutor` gives each attempt's processes: niceness, working directory, environment, log.
@Suite(.hangLimit(minutes: 1))
struct LocalExecutorTests {
    @Test(arguments: [(Int32(10), "10"), (Int32(19), "19")])
    func theWorkRunsWithItsNiceness(niceness: Int32, printed: String) async throws {
        try await withStepBench { bench in
            let (lines, result) = try await bench.run(bench.work(["nice"], niceness: niceness))
            #expect(result == .succeeded)
            #expect(lines == [printed])
        }
    }

    @Test func theChildGetsItsWorkingDirectoryAndExactlyItsEnvironment() async throws {
        try await withStepBench { bench in
            try FileManager.default.createDirectory(atPath: bench.directory.file("sub dir"), withIntermediateDirectories: false)
            var environment = StepBench.environment
            environment["GREETING"] = "hello, world"
            let work = bench.work(["pwd -P", "printf '%s|%s\\n' \"$GREETING\" \"${HOME-unset}\""],
                                  workingDirectory: bench.directory.file("sub dir"), environment: environment)
            let (lines, result) = try await bench.run(work)
            #expect(result == .succeeded)
            // HOME is set in the test process, but the work's environment is complete as given: no leaks.
            #expect(lines == [bench.directory.file("sub dir"), "hello, world|unset"])
        }
    }

    @Test func aRetryAppendsToTheLogUnderAnAttemptLine() async throws {
        try await withStepBench { bench in
            let first = try await bench.run(bench.work(["echo first try; exit 1"], attempt: 1))
            #expect(first.result?.exitCode == 1)
            let second = try await bench.run(bench.work(["echo second try"], attempt: 2))
            #expect(second.result == .succeeded)
            #expect(second.lines == ["second try"])
            #expect(bench.log() == "first try\n--- attempt 2 ---\nsecond try\n")
            // A new first attempt (the next run) starts the log afresh.
            _ = try await bench.run(bench.work(["echo next run"], attempt: 1))
            #expect(bench.log() == "next run\n")
        }
    }

    @Test func aFirstAttemptEmptiesTheLogAnEarlierRunLeftEvenWhenSilent() async throws {
        try await withStepBench { bench in
            // Logs left by an earlier run, found when the folder is first read; none for `fresh`.
            try FileManager.default.createDirectory(atPath: bench.directory.file("logs"), withIntermediateDirectories: false)
            try bench.directory.write("stale line\n", to: "logs/quiet.log")
            try bench.directory.write("stale line\n", to: "logs/loud.log")
            #expect(try await bench.run(bench.work(["true"], id: "quiet")).result == .succeeded)
            #expect(try await bench.run(bench.work(["echo new line"], id: "loud")).result == .succeeded)
            #expect(try await bench.run(bench.work(["true"], id: "fresh")).result == .succeeded)
            #expect(bench.log(of: "quiet") == "")
            #expect(bench.log(of: "loud") == "new line\n")
            #expect(bench.log(of: "fresh") == nil)
        }
    }

    @Test func logsOfDifferentTasksStaySeparate() async throws {
        try await withStepBench { bench in
            async let one = bench.run(bench.work(["echo from one"], id: "one"))
            async let two = bench.run(bench.work(["echo from two"], id: "two"))
            _ = try await (one, two)
            #expect(bench.log(of: "one") == "from one\n")
            #expect(bench.log(of: "two") == "from two\n")
        }
    }

    /// A command whose program is busy (`ETXTBSY`, see `ProcessSpawner.BusyProgram`) is tried again from a
    /// timer: `start` returns while the script is still held open for writing, and the command runs once
    /// it is let go. The patience is raised from half a second: under load this test's thread was once
    /// starved for longer between `start` and `close` (loaded ThreadSanitizer round at d8983ec).
    @Test func aBusyProgramIsTriedAgainFromATimerAndRuns() async throws {
        var spawner = ProcessSpawner()
        spawner.busyPatience = .seconds(600)
        try await withStepBench(spawner: spawner) { bench in
            let writer = try bench.busyProgram("busy")
            var watch = try bench.start(bench.work(["./busy"]))
            close(writer)
            #expect(await watch.end() == .succeeded)
            #expect(watch.lines == ["ran"])
        }
    }

    /// A program that stays busy beyond the spawner's patience goes to the shell, which says why it cannot
    /// run: the task fails with the shell's 126, its message in the output.
    @Test func aProgramBusyBeyondThePatienceFailsWithTheShellsMessage() async throws {
        var spawner = ProcessSpawner()
        spawner.busyPatience = .milliseconds(4)
        try await withStepBench(spawner: spawner) { bench in
            let writer = try bench.busyProgram("busy")
            defer { close(writer) }
            var watch = try bench.start(bench.work(["./busy"]))
            guard case .failed(let exitCode, _, _)? = await watch.end() else {
                Issue.record("the task did not fail")
                return
            }
            #expect(exitCode == 126)
            #expect(watch.lines.count == 1 && watch.lines[0].contains("Text file busy"), "\(watch.lines)")
        }
    }
}
