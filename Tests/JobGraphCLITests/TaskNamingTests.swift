import Foundation
import JobGraphTestSupport
import Testing

/// `aliases`, `internal` and `platforms` through the binary (docs/pipeline.md, "Tasks" and "Platforms"),
/// and a cycle reported beside an unknown need (issue 35, bug 10).
@Suite(.hangLimit(minutes: 1))
struct TaskNamingTests {
    static let yaml = """
        version: 1
        tasks:
          gen: {run: "echo gen >> log.txt", internal: true}
          build: {run: "echo build >> log.txt", needs: [gen], aliases: [b, compile], description: Build it.}
          lint: {run: "echo lint >> log.txt"}
          mac: {run: "echo mac >> log.txt", platforms: [darwin]}
          after-mac: {run: "echo after-mac >> log.txt", needs: [mac]}
          here: {run: "echo here >> log.txt", platforms: [linux]}
        """

    @Test func anAliasNamesItsTaskInRunExplainAndList() async throws {
        let directory = try ScratchDirectory("jobgraph-naming")
        defer { directory.remove() }
        try directory.write(Self.yaml, to: "p.yaml")
        let run = try await JobGraphBinary.run(["run", "p.yaml", "compile"], in: directory)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(directory.read("log.txt") == "gen\nbuild\n")
        let explain = try await JobGraphBinary.run(["explain", "p.yaml", "b"], in: directory)
        #expect(explain.status == 0, "\(explain.standardError)")
        #expect(explain.outputLines.first?.hasPrefix("build: ") == true, "\(explain.outputLines)")
        let list = try await JobGraphBinary.run(["list", "p.yaml"], in: directory)
        #expect(list.status == 0, "\(list.standardError)")
        // `gen` is internal: not listed.
        #expect(list.outputLines == [
            "p.yaml: 5 tasks",
            "task       description",
            "build      Build it. (aliases: b, compile)",
            "lint",
            "mac        (if platform is darwin)",
            "after-mac",
            "here       (if platform is linux)",
        ])
    }

    @Test func anInternalTaskRunsOnlyWhenNeededAndCannotBeNamed() async throws {
        let directory = try ScratchDirectory("jobgraph-naming")
        defer { directory.remove() }
        try directory.write(Self.yaml, to: "p.yaml")
        let named = try await JobGraphBinary.run(["run", "p.yaml", "gen"], in: directory)
        #expect(named.status == 2)
        #expect(named.errorLines == [
            "error: task 'gen' is internal: it runs only when a task that runs needs it, and cannot be named; it is needed by 'build'",
        ])
        #expect(!directory.exists("log.txt"))
        let lint = try await JobGraphBinary.run(["run", "p.yaml", "lint"], in: directory)
        #expect(lint.status == 0, "\(lint.standardError)")
        #expect(directory.read("log.txt") == "lint\n")
    }

    @Test func aTaskForAnotherPlatformIsSkippedWithItsReasonAndItsDependentsWithIt() async throws {
        let directory = try ScratchDirectory("jobgraph-naming")
        defer { directory.remove() }
        try directory.write(Self.yaml, to: "p.yaml")
        let dry = try await JobGraphBinary.run(["run", "p.yaml", "here", "after-mac", "--dry-run"], in: directory)
        #expect(dry.status == 0, "\(dry.standardError)")
        let macLine = try #require(dry.outputLines.first { $0.contains(" mac ") })
        #expect(macLine.hasSuffix("skipped: platform is darwin (this is linux/amd64)") || macLine.hasSuffix("skipped: platform is darwin (this is linux/arm64)"),
                "\(dry.outputLines)")

        let run = try await JobGraphBinary.run(["run", "p.yaml", "here", "after-mac", "--events", "events.jsonl"], in: directory)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(directory.read("log.txt") == "here\n")
        let events = PipelineFolder.events(in: directory.read("events.jsonl") ?? "")
        #expect(RunResult.finalStates(in: events) == ["mac": "skipped", "after-mac": "skipped", "here": "succeeded"])
        let skip = try #require(events.first { $0["task"] as? String == "mac" && $0["to"] as? String == "skipped" })
        #expect((skip["error"] as? String)?.hasPrefix("condition not met: platform is darwin (this is linux/") == true, "\(skip)")
        #expect(run.standardOutput.contains("mac  waiting -> skipped  (condition not met: platform is darwin (this is linux/"),
                "\(run.standardOutput)")
    }

    @Test func anUnknownPlatformIsExitTwoWithANearMatch() async throws {
        let directory = try ScratchDirectory("jobgraph-naming")
        defer { directory.remove() }
        try directory.write("version: 1\ntasks:\n  a: {run: echo, platforms: [linus]}\n", to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["validate", "p.yaml"], in: directory)
        #expect(outcome.status == 2)
        #expect(outcome.errorLines == ["p.yaml:3:30: error: unknown platform 'linus'; did you mean 'linux'?"])
    }

    @Test func anAliasClashIsExitTwoAtItsPlace() async throws {
        let directory = try ScratchDirectory("jobgraph-naming")
        defer { directory.remove() }
        try directory.write("version: 1\ntasks:\n  a: {run: echo, aliases: [x]}\n  b: {run: echo, aliases: [x]}\n", to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["validate", "p.yaml"], in: directory)
        #expect(outcome.status == 2)
        #expect(outcome.errorLines == ["p.yaml:4:28: error: alias 'x' of task 'b' is already an alias of task 'a' (line 3); choose another alias"])
    }

    @Test func aCycleIsReportedBesideAnUnknownNeedInOneRun() async throws {
        let directory = try ScratchDirectory("jobgraph-naming")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              build: {run: make, needs: [test, configur]}
              test: {run: make test, needs: [build]}
              configure: {run: ./configure}
            """, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["validate", "p.yaml"], in: directory)
        #expect(outcome.status == 2)
        #expect(outcome.errorLines == [
            "p.yaml:3:36: error: unknown task 'configur' in 'needs'; did you mean 'configure'?",
            "p.yaml:4:34: error: dependency cycle: build -> test -> build",
            "p.yaml:3:30: note: 'build' needs 'test' here",
            "p.yaml:4:34: note: 'test' needs 'build' here",
        ])
    }
}
