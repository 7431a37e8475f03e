import Execution
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import JobGraphTestSupport
import Testing

/// `run` and `parallel` tasks as real child processes on a real event loop (contract: "The pipeline file",
/// `run`, `parallel`, `timeout`). Every wait is for an event the step reports; the time limit is a hang guard.
@Suite(.hangLimit(minutes: 1))
struct ShellStepTests {
    @Test func outputReachesTheLogAndTheReporterAsWholeLines() async throws {
        try await withStepBench { bench in
            // Pieces of one line arrive in separate writes; stderr shares the pipe; the last line has no newline.
            let command = "printf 'one\\ntw'; sleep 0.05; printf 'o grüße\\n'; echo to-stderr >&2; printf 'last without newline'"
            let (lines, result) = try await bench.run(bench.work([command]))
            #expect(result == .succeeded)
            #expect(lines == ["one", "two grüße", "to-stderr", "last without newline"])
            #expect(bench.log() == "one\ntwo grüße\nto-stderr\nlast without newline\n")
        }
    }

    @Test func aSilentTaskLeavesNoLogAndAnEarlierRunsLogIsEmptied() async throws {
        try await withStepBench { bench in
            let (_, silent) = try await bench.run(bench.work(["true"], id: "silent"))
            #expect(silent == .succeeded)
            #expect(bench.log(of: "silent") == nil)

            // A log from an earlier run must not be taken for this run's output.
            let (_, first) = try await bench.run(bench.work(["echo earlier"], id: "again"))
            #expect(first == .succeeded)
            #expect(bench.log(of: "again") == "earlier\n")
            let (_, second) = try await bench.run(bench.work(["true"], id: "again"))
            #expect(second == .succeeded)
            #expect(bench.log(of: "again") == "")
        }
    }

    @Test func aRunListGoesInOrderAndStopsAtTheFirstFailureWithItsExitCode() async throws {
        try await withStepBench { bench in
            let (lines, result) = try await bench.run(bench.work(["echo first", "echo second; exit 3", "touch third-ran"]))
            #expect(result?.exitCode == 3)
            #expect(result?.reason.contains("exit 3") == true)
            #expect(result?.reason.contains("code 3") == true)
            #expect(lines == ["first", "second"])
            #expect(!bench.directory.exists("third-ran"))
        }
    }

    @Test func aGroupRunsNoMoreCommandsAtOnceThanItsLimit() async throws {
        // The step starts commands as it begins and as one ends, nowhere else: once `start` has returned, and
        // while every command waits for `go`, the processes running are all there will be until then.
        try await withStepBench { bench in
            let commands = (1...4).map { "touch started.\($0); until [ -e go ]; do sleep 0.01; done # \(bench.directory.path)" }
            var watch = try bench.start(bench.work(commands, concurrently: true, processLimit: 2))
            func living() -> [Int] { commands.map { ProcessTable.commands(withArgument: $0).count } }
            // Under ThreadSanitizer on a loaded machine, one look at `/proc` once found none of them.
            #expect(await eventually { living().reduce(0, +) >= 2 })
            #expect(living() == [1, 1, 0, 0])
            try bench.directory.write("", to: "go")
            #expect(await watch.end() == .succeeded)
            #expect((1...4).allSatisfy { bench.directory.exists("started.\($0)") })
        }
    }

    @Test func parallelCommandsRunAtTheSameTime() async throws {
        try await withStepBench { bench in
            // Opening a FIFO blocks until its other end is opened too: the first command cannot finish
            // writing to `ab` unless the second is already reading, and the second cannot write `ba` unless
            // the first reads it. Run one after the other, they would block until the (hang-guard) timeout.
            try #require(mkfifo(bench.directory.file("ab"), 0o600) == 0)
            try #require(mkfifo(bench.directory.file("ba"), 0o600) == 0)
            let work = bench.work(["echo from-first > ab; cat ba", "cat ab; echo from-second > ba"],
                                  concurrently: true, timeout: 50)
            let (lines, result) = try await bench.run(work)
            #expect(result == .succeeded)
            #expect(lines.sorted() == ["from-first", "from-second"])
        }
    }

    /// A command that ends at once, while the next one of its group is still being started, does not end
    /// the attempt: every command's output comes before the end. Repeated, since it is a race to lose.
    @Test func aCommandThatEndsAtOnceDoesNotEndItsGroupBeforeTheOthers() async throws {
        try await withStepBench { bench in
            for round in 0..<30 {
                let work = bench.work(["true", "true", "echo late-\(round)"], concurrently: true)
                let (lines, result) = try await bench.run(work)
                #expect(result == .succeeded)
                #expect(lines == ["late-\(round)"], "round \(round)")
            }
        }
    }

    @Test func theFirstParallelFailureTerminatesTheOthers() async throws {
        try await withStepBench { bench in
            let work = bench.work([
                "echo $$ > long.tmp && mv long.tmp long.group; exec sleep 300.81",
                "until [ -e long.group ]; do sleep 0.01; done; exit 4",
            ], concurrently: true)
            let (_, result) = try await bench.run(work)
            #expect(result?.exitCode == 4)
            #expect(result?.reason.contains("exit 4") == true)
            let group = try #require(bench.directory.read("long.group").flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
            // The step ends only once every command has been reaped.
            #expect(ProcessTable.living(inGroup: group).isEmpty)
            #expect(ProcessTable.living(withArgument: "300.81").isEmpty)
        }
    }

    @Test func aTimeoutEndsTheWholeProcessGroupIncludingABackgroundedGrandchild() async throws {
        try await withStepBench { bench in
            var watch = try bench.start(bench.work(["sleep 300.82 & echo \"$$ $!\"; sleep 300.82"], timeout: 2))
            // The shell's pid (its group's id) and its background child's: the line proves the fork happened.
            let ids = try #require(await watch.nextLine()).split(separator: " ").compactMap { pid_t($0) }
            try #require(ids.count == 2)
            let group = ids[0]
            let result = try #require(await watch.end())
            #expect(result.reason.contains("timed out after 2s"))
            #expect(result.exitCode == nil)
            // The kernel may still be finishing the grandchild's exit when its pipe reports end of file.
            #expect(await eventually { ProcessTable.living(inGroup: group).isEmpty })
            // Only zombies may remain in the group (nothing here reaps orphans), so kill(-pgid, 0) may still
            // find them; no process of it can run again.
            #expect(ProcessTable.living(withArgument: "300.82").isEmpty)
        }
    }

    @Test func aTimedOutCommandFailsEvenWhenItExitsZeroOnSIGTERM() async throws {
        try await withStepBench { bench in
            let command = "trap 'echo caught; exit 0' TERM; echo up; sleep 300.83 & wait"
            let (lines, result) = try await bench.run(bench.work([command], timeout: 2))
            #expect(lines == ["up", "caught"])
            #expect(result?.reason.contains("timed out after 2s") == true)
            #expect(ProcessTable.living(withArgument: "300.83").isEmpty)
        }
    }

    @Test func aRunListStoppedPartWayDoesNotSucceed() async throws {
        try await withStepBench { bench in
            // The first command ends cleanly on SIGTERM, but the second never runs: that is no success.
            var watch = try bench.start(bench.work(["trap 'exit 0' TERM; echo up; sleep 300.84 & wait", "touch second-ran"]))
            #expect(await watch.nextLine() == "up")
            watch.execution.terminate(grace: 5)
            let result = try #require(await watch.end())
            #expect(result != .succeeded)
            #expect(result.reason.contains("touch second-ran"))
            #expect(!bench.directory.exists("second-ran"))
        }
    }

    @Test func terminateEndsEveryCommandOfAParallelGroup() async throws {
        try await withStepBench { bench in
            var watch = try bench.start(bench.work(["echo up; exec sleep 300.85", "echo up; exec sleep 300.85"], concurrently: true))
            #expect(await watch.nextLine() == "up")
            #expect(await watch.nextLine() == "up")
            watch.execution.terminate(grace: 5)
            let result = try #require(await watch.end())
            #expect(result.reason.contains("SIGTERM"))
            #expect(ProcessTable.living(withArgument: "300.85").isEmpty)
        }
    }

    @Test func aMissingProgramExitsWith127() async throws {
        try await withStepBench { bench in
            let (lines, result) = try await bench.run(bench.work(["jobgraph-no-such-program-4711 --flag"]))
            #expect(result?.exitCode == 127)
            #expect(lines.contains { $0.contains("jobgraph-no-such-program-4711") && $0.contains("not found") })
        }
    }
}
