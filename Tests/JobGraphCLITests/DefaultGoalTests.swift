import Foundation
import JobGraphTestSupport
import Testing

/// What a `run` runs when it names no task, and in which order named tasks run (docs/cli.md, "run";
/// docs/pipeline.md, `default` and `manual`). In the fzf port, a bare run deleted `target/` through
/// `clean` right after eleven tasks were found up to date, and `run clean build -j 1` built first.
@Suite(.hangLimit(minutes: 1))
struct DefaultGoalTests {
    static let makefileLike = """
        version: 1
        tasks:
          build: {needs: [compile], run: "echo built >> log.txt"}
          compile: {run: "echo compiled >> log.txt"}
          clean: {run: "echo cleaned >> log.txt", manual: true}
          release: {needs: [build], run: "echo released >> log.txt", manual: true}
          publish: {needs: [sign], run: "echo published >> log.txt"}
          sign: {run: "echo signed >> log.txt", manual: true}
        """

    @Test func aBareRunLeavesOutManualTasksUnlessATaskThatRunsNeedsThem() async throws {
        let directory = try ScratchDirectory("jobgraph-default")
        defer { directory.remove() }
        try directory.write(Self.makefileLike, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml"], in: directory)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let ran = Set((directory.read("log.txt") ?? "").split(separator: "\n").map(String.init))
        // `sign` is manual but `publish` needs it.
        #expect(ran == ["compiled", "built", "signed", "published"])
    }

    @Test func theDefaultListIsWhatABareRunRunsInItsOrder() async throws {
        let directory = try ScratchDirectory("jobgraph-default")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            default: [clean, build]
            tasks:
              build: {needs: [compile], run: "echo built >> log.txt"}
              compile: {run: "test ! -e cleaned.txt || echo compiled after clean >> log.txt; echo compiled >> log.txt"}
              clean: {run: "touch cleaned.txt; echo cleaned >> log.txt", manual: true}
              test: {needs: [build], run: "echo tested >> log.txt"}
            """, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--jobs", "4"], in: directory)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(directory.read("log.txt") == "cleaned\ncompiled after clean\ncompiled\nbuilt\n")
    }

    @Test func namedTasksRunInTheOrderGivenNotInFileOrder() async throws {
        let directory = try ScratchDirectory("jobgraph-default")
        defer { directory.remove() }
        try directory.write(Self.makefileLike, to: "p.yaml")
        let running = try JobGraphBinary.start(["run", "p.yaml", "clean", "build", "--jobs", "2", "--events", "events.jsonl"],
                                               in: directory)
        let outcome = try await running.finish()
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(directory.read("log.txt") == "cleaned\ncompiled\nbuilt\n")
        // Through the events too: nothing `build` brings in starts before `clean` has ended.
        let moments = running.events(in: "events.jsonl").compactMap { event -> String? in
            guard let task = event["task"] as? String, let to = event["to"] as? String else { return nil }
            return "\(task) \(to)"
        }
        let cleaned = try #require(moments.firstIndex(of: "clean succeeded"))
        let compileStarted = try #require(moments.firstIndex(of: "compile executing"))
        #expect(cleaned < compileStarted, "\(moments)")
    }

    @Test func anUnknownDefaultTaskIsAnErrorWithItsPlaceAndANearMatch() async throws {
        let directory = try ScratchDirectory("jobgraph-default")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            default: [build, tset]
            tasks:
              build: {run: "echo built"}
              test: {run: "echo tested"}
            """, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["validate", "p.yaml"], in: directory)
        #expect(outcome.status == 2)
        #expect(outcome.errorLines == ["p.yaml:2:18: error: unknown task 'tset' in 'default'; did you mean 'test'?"])
    }

    @Test func listShowsTheDefaultAndTheManualTasks() async throws {
        let directory = try ScratchDirectory("jobgraph-default")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            default: [build]
            tasks:
              build: {run: "echo built", description: Builds it}
              clean: {run: "echo cleaned", manual: true}
            """, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["list", "p.yaml"], in: directory)
        #expect(outcome.status == 0)
        #expect(outcome.outputLines == [
            "p.yaml: 2 tasks",
            "task   description",
            "build  Builds it (default)",
            "clean  (manual)",
        ])
    }

    /// make's `all: a b`, just's `polyglot: python js` and go-task's `start:all: {deps: [a, b]}`: a task
    /// with needs and no command. Naming it runs its needs; it succeeds once they have.
    @Test func aTaskWithNeedsAndNoActionIsAGroupOfThem() async throws {
        let directory = try ScratchDirectory("jobgraph-default")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              all: {needs: [a, b]}
              a: {run: "echo a >> log.txt"}
              b: {run: "echo b >> log.txt"}
              c: {run: "echo c >> log.txt"}
              broken: {needs: [fails]}
              fails: {run: "exit 3"}
            """, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "all", "--progress", "plain"], in: directory)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(Set((directory.read("log.txt") ?? "").split(separator: "\n")) == ["a", "b"])
        #expect(outcome.standardOutput.contains("all  ready -> executing"), "\(outcome.standardOutput)")
        #expect(outcome.standardOutput.contains("all  executing -> succeeded"), "\(outcome.standardOutput)")

        let failed = try await JobGraphBinary.run(["run", "p.yaml", "broken", "--progress", "plain"], in: directory)
        #expect(failed.status == 1)
        #expect(failed.standardOutput.contains("broken  pending -> skipped"), "\(failed.standardOutput)")
    }
}
