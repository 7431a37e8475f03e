import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The no-op replay through the built binary (docs/state.md, "A no-op rerun replays"): once a build ended
/// with every task done, or a run found every task up to date, the next identical run repeats the verdict
/// "every task up to date" without checking, and shows and records what a checked rerun does; any change it
/// depends on gives a normal run that does exactly the work it must.
@Suite(.hangLimit(minutes: 3))
struct NoOpReplayTests {
    /// `a -> b` read and write files; `c` writes a variable's value.
    static let pipeline = """
        version: 1
        vars:
          greeting: hello
        tasks:
          a:
            run: mkdir -p build && tr a-z A-Z < src/words.txt > build/a.txt
            inputs: [src/words.txt]
            outputs: [build/a.txt]
          b:
            needs: [a]
            run: wc -l < build/a.txt > build/b.txt
            inputs: [build/a.txt]
            outputs: [build/b.txt]
          c:
            run: mkdir -p build && echo "{{ greeting }}" > build/c.txt
            outputs: [build/c.txt]
        """

    static let allTasks: Set = ["a", "b", "c"]

    /// A folder whose pipeline was built (run 1, which records the verdict its rerun would reach) and
    /// rerun (run 2, a replay of that verdict).
    private func replayingFolder() async throws -> PipelineFolder {
        let folder = try PipelineFolder(Self.pipeline)
        try folder.write("alpha\nbeta\n", to: "src/words.txt")
        let first = try await folder.run()
        #expect(first.status == 0, "\(first.outcome.standardError)")
        #expect(first.executed == Self.allTasks)
        let second = try await folder.run()
        #expect(second.upToDate == Self.allTasks)
        #expect(try await replayed(in: folder) == [2: 1])
        return folder
    }

    /// Run number -> the run it replayed, for every replayed run in `jobgraph history --json`.
    private func replayed(in folder: PipelineFolder) async throws -> [Int: Int] {
        let history = try await folder.history(["--json"])
        #expect(history.status == 0, "\(history.standardError)")
        let document = try JSONSerialization.jsonObject(with: Data(history.standardOutput.utf8)) as? [String: Any]
        var result: [Int: Int] = [:]
        for run in document?["runs"] as? [[String: Any]] ?? [] {
            if let id = run["id"] as? Int, let source = run["replayed"] as? Int { result[id] = source }
        }
        return result
    }

    /// The events without what differs from run to run: times, and the run's own duration.
    private static func comparable(_ events: [[String: Any]]) -> [String] {
        events.map { event in
            var event = event
            for key in ["time", "elapsed", "wall_time"] { event[key] = nil }
            let data = (try? JSONSerialization.data(withJSONObject: event, options: [.sortedKeys])) ?? Data()
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// Plain progress lines without their time stamps and the summary's duration.
    private static func comparable(_ lines: [String]) -> [String] {
        lines.map { line in
            line.replacingOccurrences(of: #"^\[ *[0-9.]+s\] "#, with: "", options: .regularExpression)
                .replacingOccurrences(of: #" in [0-9.]+s$"#, with: "", options: .regularExpression)
        }
    }

    /// `task|state|attempts|duration|exit_code|definition` for each of the run's history rows, read by
    /// python3's own SQLite.
    /// The task graph's node titles in a `jobgraph report` page: "a: up-to-date".
    private static func taskTitles(in page: String) -> [String] {
        page.split(separator: "\n").filter { $0.hasPrefix("<g class=\"node\"><title>") }.compactMap { line in
            line.split(separator: ">").dropFirst(2).first?.split(separator: "<").first.map(String.init)
        }
    }

    private static func historyRows(of run: Int, in folder: PipelineFolder) async -> [String] {
        await folder.python("""
            import sqlite3, sys
            connection = sqlite3.connect(sys.argv[1])
            for row in connection.execute("SELECT task, state, attempts, duration, exit_code, definition FROM task_runs WHERE run_id = ? ORDER BY task", (int(sys.argv[2]),)):
                print("|".join(str(value) for value in row))
            """, arguments: [folder.directory.file(".jobgraph/state.db"), String(run)])
            .split(separator: "\n").map(String.init)
    }

    @Test func theRerunAfterABuildReplaysItAndShowsWhatACheckedRerunShows() async throws {
        let folder = try PipelineFolder(Self.pipeline)
        defer { folder.remove() }
        try folder.write("alpha\nbeta\n", to: "src/words.txt")
        #expect(try await folder.run().executed == Self.allTasks)
        let replay = try await folder.run()
        #expect(try await replayed(in: folder) == [2: 1], "the rerun after the build replays the build's verdict")
        // An anchor put on `version`: other YAML content (the same pipeline), so this run checks every task.
        try folder.restate("checked")
        let checked = try await folder.run()
        #expect(try await replayed(in: folder) == [2: 1], "run 3 checked its tasks")

        #expect(checked.status == 0 && replay.status == 0)
        #expect(checked.upToDate == Self.allTasks)
        #expect(Self.comparable(replay.events) == Self.comparable(checked.events))
        #expect(Self.comparable(replay.outcome.outputLines) == Self.comparable(checked.outcome.outputLines))
        #expect(replay.outcome.outputLines.contains { $0.hasPrefix("3 up-to-date in ") }, "\(replay.outcome.outputLines)")
        #expect(replay.outcome.standardError == checked.outcome.standardError)
        #expect(await Self.historyRows(of: 1, in: folder).count == 3)
        #expect(await Self.historyRows(of: 2, in: folder).isEmpty, "the replayed run shares run 1's rows rather than copying them")

        // A run that checked every task records its verdict too: the same command again replays it.
        #expect(try await folder.run().upToDate == Self.allTasks)
        #expect(try await replayed(in: folder) == [2: 1, 4: 3])

        // The history shows the replayed run as up to date, as the run it repeats would have been, and says
        // which run's verdict it repeated.
        let history = try await folder.history()
        #expect(history.status == 0)
        #expect(history.outputLines.contains { $0.contains("#2") && $0.contains("3 up-to-date; replayed run 1: nothing changed") },
                "\(history.outputLines)")
        #expect(history.outputLines.contains { $0.contains("#1") && $0.contains("3 succeeded") && !$0.contains("replayed") })
        #expect(history.outputLines.contains { $0.contains("#3") && !$0.contains("replayed") })
        let report = try await JobGraphBinary.run(["report", "p.yaml", "--run", "2", "-o", "2.html"], in: folder.directory)
        #expect(report.status == 0, "\(report.standardError)")
        #expect(report.standardOutput.contains("run 2 of p.yaml"))
        _ = try await JobGraphBinary.run(["report", "p.yaml", "--run", "3", "-o", "3.html"], in: folder.directory)
        let pages = ["2.html", "3.html"].map { folder.directory.read($0) ?? "" }
        let tasksShown = pages.map(Self.taskTitles)
        #expect(tasksShown[0].count == 3 && tasksShown[0].allSatisfy { $0.hasSuffix(": up-to-date") }, "\(tasksShown[0])")
        #expect(tasksShown[0] == tasksShown[1], "the report of run 2 shows what the checked run 3 shows")
        let withoutNumbers = pages.map { $0.replacingOccurrences(of: "[0-9]+", with: "", options: .regularExpression) }
        #expect(withoutNumbers[0] == withoutNumbers[1], "the report of run 2 shows none of the build's attempts")
    }

    /// A pipeline whose events depend on its queues, priorities and exclusive categories: the replay of a
    /// build must send them in the order a checked rerun does.
    static let scheduledPipeline = """
        version: 1
        queues:
          slow: {max_concurrent: 1}
        tasks:
          setup:
            run: mkdir -p out && touch out/setup
            outputs: [out/setup]
          low:
            needs: [setup]
            priority: low
            queue: slow
            run: touch out/low
            inputs: [out/setup]
            outputs: [out/low]
          high:
            needs: [setup]
            priority: high
            queue: slow
            exclusive: [disk]
            run: touch out/high
            inputs: [out/setup]
            outputs: [out/high]
          other:
            run: mkdir -p out && touch out/other
            exclusive: [disk]
            outputs: [out/other]
          last:
            needs: [low, high, other]
            run: cat out/low out/high out/other > out/last
            inputs: [out/low, out/high, out/other]
            outputs: [out/last]
        """

    /// The same pipeline laid out otherwise: flow style for two tasks, other indentation, a blank line, a
    /// comment.
    static let pipelineLaidOutOtherwise = """
        version: 1

        # the same pipeline, laid out otherwise
        vars: {greeting: hello}
        tasks:
            a: {run: mkdir -p build && tr a-z A-Z < src/words.txt > build/a.txt, inputs: [src/words.txt], outputs: [build/a.txt]}
            b: {needs: [a], run: wc -l < build/a.txt > build/b.txt, inputs: [build/a.txt], outputs: [build/b.txt]}
            c:
                run: mkdir -p build && echo "{{ greeting }}" > build/c.txt   # a variable
                outputs:
                  - build/c.txt
        """

    /// `p.yaml`'s length and the length `noop_replays` keeps for it, read by python3's own SQLite.
    private static func recordedLength(in folder: PipelineFolder) async -> String {
        await folder.python("""
            import sqlite3, sys
            print(sqlite3.connect(sys.argv[1]).execute("SELECT pipeline_length FROM noop_replays").fetchone()[0])
            """, arguments: [folder.directory.file(".jobgraph/state.db")])
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func anEditOfCommentsOrLayoutStillReplaysTheVerdict() async throws {
        let folder = try await replayingFolder()
        defer { folder.remove() }
        let replay = try await folder.run()
        #expect(try await replayed(in: folder) == [2: 1, 3: 1])
        try folder.addComment("a note")
        let commented = try await folder.run()
        #expect(try await replayed(in: folder) == [2: 1, 3: 1, 4: 1], "a comment changes nothing the verdict rests on")
        #expect(Self.comparable(commented.events) == Self.comparable(replay.events))
        #expect(Self.comparable(commented.outcome.outputLines) == Self.comparable(replay.outcome.outputLines))
        // The record now names the commented bytes: the next run replays them without reading the file through.
        let length = String((folder.directory.read("p.yaml") ?? "").utf8.count)
        #expect(await Self.recordedLength(in: folder) == length)
        #expect(try await folder.run().upToDate == Self.allTasks)
        #expect(try await replayed(in: folder)[5] == 1)

        try folder.rewrite(Self.pipelineLaidOutOtherwise)
        #expect(try await folder.run().upToDate == Self.allTasks)
        #expect(try await replayed(in: folder)[6] == 1, "flow style, indentation and blank lines change nothing either")

        // Other content, the same tasks: checked, and every task found up to date.
        try folder.rewrite(Self.pipelineLaidOutOtherwise.replacingOccurrences(of: "{greeting: hello}", with: "{greeting: 'hello'}"))
        let checked = try await folder.run()
        #expect(checked.upToDate == Self.allTasks)
        #expect(try await replayed(in: folder)[7] == nil)
        // A change to a task, in a file that also gained a comment: that task runs.
        try folder.rewrite(Self.pipelineLaidOutOtherwise.replacingOccurrences(of: "{{ greeting }}", with: "{{ greeting }}!") + "# hi\n")
        let changed = try await folder.run()
        #expect(changed.executed == ["c"], "\(changed.outcome.outputLines)")
        #expect(folder.directory.read("build/c.txt") == "hello!\n")
        #expect(try await replayed(in: folder)[8] == nil)
    }

    @Test func theReplayOfABuildKeepsTheOrderOfQueuesPrioritiesAndExclusivity() async throws {
        let folder = try PipelineFolder(Self.scheduledPipeline)
        defer { folder.remove() }
        let build = try await folder.run()
        #expect(build.status == 0, "\(build.outcome.standardError)")
        #expect(build.executed.count == 5)
        let replay = try await folder.run()
        try folder.restate("checked")
        let checked = try await folder.run()
        #expect(try await replayed(in: folder) == [2: 1])
        #expect(replay.upToDate.count == 5 && checked.upToDate.count == 5)
        #expect(Self.comparable(replay.events) == Self.comparable(checked.events))
    }

    /// 300 tasks in layers, each but the first layer's needing two tasks of earlier layers, picked by a
    /// fixed linear congruential sequence: many orders in which a Plan could end them.
    static var layeredPipeline: String {
        var lines = ["version: 1", "tasks:"]
        var state: UInt64 = 42
        func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
        for index in 0..<300 {
            let id = String(format: "t%03d", index)
            guard index >= 20 else {
                lines.append("  \(id): {run: mkdir -p out && touch out/\(id), outputs: [out/\(id)]}")
                continue
            }
            let needs = Set([next(index), next(index)]).sorted().map { String(format: "t%03d", $0) }
            lines.append("  \(id): {run: touch out/\(id), needs: [\(needs.joined(separator: ", "))], "
                         + "inputs: [\(needs.map { "out/" + $0 }.joined(separator: ", "))], outputs: [out/\(id)]}")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func theReplayOfABuildEndsTasksInTheOrderACheckedRerunDoes() async throws {
        let folder = try PipelineFolder(Self.layeredPipeline)
        defer { folder.remove() }
        let build = try await folder.run(["--jobs", "2"])
        #expect(build.status == 0, "\(build.outcome.standardError)")
        #expect(build.executed.count == 300)
        let replay = try await folder.run(["--jobs", "2"])
        try folder.restate("checked")
        let checked = try await folder.run(["--jobs", "2"])
        #expect(try await replayed(in: folder) == [2: 1])
        #expect(replay.upToDate.count == 300 && checked.upToDate.count == 300)
        #expect(Self.comparable(replay.events) == Self.comparable(checked.events))
    }

    @Test func aBuildLeavesNoVerdictWhenItsRerunMightDoOtherwise() async throws {
        // Each pipeline is built, then rerun twice: no run may be replayed.
        let pipelines = [
            // A task failed: its rerun runs it again.
            "failed": """
                version: 1
                tasks:
                  a: {run: "touch a.out; test -f go", outputs: [a.out], allow_failure: true}
                """,
            // An input named by a pattern: a new file that matches it is for the rerun to find.
            "pattern": """
                version: 1
                tasks:
                  a: {run: "mkdir -p src && touch src/x.txt", outputs: [src/x.txt]}
                  b: {needs: [a], run: cat src/*.txt > b.out, inputs: ["src/*.txt"], outputs: [b.out]}
                """,
            // A task without inputs or outputs runs every time.
            "untracked": """
                version: 1
                tasks:
                  a: {run: touch a.out, outputs: [a.out]}
                  b: {run: echo b}
                """,
        ]
        for (name, pipeline) in pipelines.sorted(by: { $0.key < $1.key }) {
            let folder = try PipelineFolder(pipeline)
            defer { folder.remove() }
            _ = try await folder.run()
            _ = try await folder.run()
            _ = try await folder.run()
            #expect(try await replayed(in: folder).isEmpty, "\(name): a run recorded a verdict")
        }
    }

    @Test func aFolderAsAnInputKeepsTheBuildFromRecordingAVerdict() async throws {
        // The folder holds one file when the build checks `use`: a file added later must make it run again.
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              gen: {run: "mkdir -p src && echo a > src/a.txt", outputs: [src/a.txt]}
              use: {needs: [gen], run: "cat src/* > all.txt", inputs: [src], outputs: [all.txt]}
            """)
        defer { folder.remove() }
        #expect(try await folder.run().executed == ["gen", "use"])
        try folder.write("b\n", to: "src/b.txt")
        let rerun = try await folder.run()
        #expect(rerun.executed == ["use"], "\(rerun.outcome.outputLines)")
        #expect(try await replayed(in: folder).isEmpty)
        #expect(folder.directory.read("all.txt") == "a\nb\n")
    }

    @Test func aPipelineHookRunsOnEveryRerunSoNoneIsReplayed() async throws {
        let folder = try PipelineFolder("""
            version: 1
            on_success: echo done >> hook.log
            tasks:
              a: {run: touch a.out, outputs: [a.out]}
            """)
        defer { folder.remove() }
        for _ in 0..<3 { #expect(try await folder.run().status == 0) }
        #expect(try await replayed(in: folder).isEmpty)
        #expect(folder.directory.read("hook.log") == "done\ndone\ndone\n", "a no-op rerun runs the hook, so a replay could not")

        // `on_failure` runs only after a failure, which a replayed run never has.
        try folder.rewrite("""
            version: 1
            on_failure: echo failed >> hook.log
            tasks:
              a: {run: touch a.out, outputs: [a.out]}
            """)
        for _ in 0..<2 { #expect(try await folder.run().status == 0) }
        #expect(try await replayed(in: folder) == [5: 4])
    }

    /// A change the verdict depends on, and the tasks a run must then execute.
    struct Invalidation: Sendable, CustomTestStringConvertible {
        var name: String
        var executed: Set<String>
        var change: @Sendable (PipelineFolder) throws -> Void
        var arguments: [String] = []
        var environment: [String: String] = JobGraphBinary.environment
        var testDescription: String { name }
    }

    static let invalidations: [Invalidation] = [
        Invalidation(name: "an input edited, same size", executed: ["a"]) { folder in
            let before = folder.modificationTime(of: "src/words.txt") ?? Date()
            try folder.write("alpha\nbetA\n", to: "src/words.txt")
            try folder.setModificationTime(of: "src/words.txt", to: before.addingTimeInterval(5))
        },
        Invalidation(name: "an input replaced by a copy with the same time, another inode", executed: []) { folder in
            let before = folder.modificationTime(of: "src/words.txt") ?? Date()
            try folder.write("alpha\nbeta\n", to: "src/copy.txt")
            try folder.setModificationTime(of: "src/copy.txt", to: before)
            #expect(rename(folder.directory.file("src/copy.txt"), folder.directory.file("src/words.txt")) == 0)
        },
        Invalidation(name: "an output deleted", executed: ["b"]) { folder in
            try folder.delete("build/b.txt")
        },
        Invalidation(name: "the pipeline's YAML content changed, not its tasks", executed: []) { folder in
            try folder.restate("v")
        },
        Invalidation(name: "a --var changed", executed: ["a", "b", "c"], change: { _ in }, arguments: ["--var", "greeting=hi"]),
        Invalidation(name: "--force", executed: ["a", "b", "c"], change: { _ in }, arguments: ["--force"]),
    ]

    @Test(arguments: invalidations)
    func aChangeGivesANormalRunThatDoesWhatItMust(_ invalidation: Invalidation) async throws {
        let folder = try await replayingFolder()
        defer { folder.remove() }
        try invalidation.change(folder)
        let changed = try await folder.run(invalidation.arguments, environment: invalidation.environment)
        #expect(changed.status == 0, "\(changed.outcome.standardError)")
        #expect(changed.executed == invalidation.executed)
        #expect(changed.upToDate == Self.allTasks.subtracting(invalidation.executed))
        #expect(try await replayed(in: folder) == [2: 1], "run 3 is no replay")
        // The same command again finds everything up to date: it replays the verdict run 3 left, but after
        // `--force`, which records none, it checks every task, and the run after it replays that.
        let again = try await folder.run(invalidation.arguments == ["--force"] ? [] : invalidation.arguments,
                                         environment: invalidation.environment)
        #expect(again.upToDate == Self.allTasks)
        let last = try await folder.run(invalidation.arguments == ["--force"] ? [] : invalidation.arguments,
                                        environment: invalidation.environment)
        #expect(last.upToDate == Self.allTasks)
        let replays = try await replayed(in: folder)
        let expected = invalidation.arguments == ["--force"] ? [2: 1, 5: 4] : [2: 1, 4: 3, 5: 3]
        #expect(replays == expected)
    }

    /// The caller's environment reaches no task's definition (only the variables the pipeline sets do), so
    /// a rerun from another shell, with a variable more and one changed, replays the verdict, as a run that
    /// checked every task would find it.
    @Test func anotherEnvironmentStillReplaysTheVerdict() async throws {
        let folder = try await replayingFolder()
        defer { folder.remove() }
        var environment = JobGraphBinary.environment
        environment["UNRELATED"] = "1"
        environment["_"] = "/usr/bin/time"
        let rerun = try await folder.run(environment: environment)
        #expect(rerun.upToDate == Self.allTasks)
        #expect(try await replayed(in: folder) == [2: 1, 3: 1])
        // A variable the pipeline sets for its tasks is the pipeline's value, whatever the caller's.
        environment["greeting"] = "bye"
        #expect(try await folder.run(environment: environment).upToDate == Self.allTasks)
        try folder.restate("checked")
        let checked = try await folder.run(environment: environment)
        #expect(checked.upToDate == Self.allTasks, "a run that checks every task reaches the same verdict")
        #expect(try await replayed(in: folder) == [2: 1, 3: 1, 4: 1])
    }

    @Test func anotherPipelineInTheFolderRunningATaskOfTheSameNameEndsTheReplay() async throws {
        let folder = try await replayingFolder()
        defer { folder.remove() }
        try folder.write("""
            version: 1
            tasks:
              a:
                run: echo other > other.txt
                outputs: [other.txt]
            """, to: "q.yaml")
        let other = try await JobGraphBinary.run(["run", "q.yaml", "--progress", "plain"], in: folder.directory)
        #expect(other.status == 0, "\(other.standardError)")
        let changed = try await folder.run()
        #expect(changed.executed == ["a"], "p.yaml's 'a' was last recorded as q.yaml's")
        #expect(changed.upToDate == ["b", "c"])
        #expect(try await replayed(in: folder)[4] == nil)
    }

    @Test func aCheckedRerunLikeTheOneBeforeSharesItsRowsAndIsReplayedInTurn() async throws {
        let folder = try await replayingFolder()
        defer { folder.remove() }
        // Runs 3 and 4 check every task: the file's content changed (an anchor). Run 3 has rows of its own (run 2
        // shares the build's, whose tasks executed); run 4, which finds what run 3 found, shares run 3's.
        for (run, comment) in [(3, "one"), (4, "two")] {
            try folder.restate(comment)
            let checked = try await folder.run()
            #expect(checked.status == 0, "\(checked.outcome.standardError)")
            #expect(checked.upToDate == Self.allTasks, "run \(run)")
        }
        #expect(await Self.historyRows(of: 3, in: folder).map { $0.split(separator: "|").prefix(3).joined(separator: "|") }
                == ["a|up-to-date|0", "b|up-to-date|0", "c|up-to-date|0"])
        #expect(await Self.historyRows(of: 4, in: folder).isEmpty)
        let replay = try await folder.run()
        #expect(replay.upToDate == Self.allTasks)
        #expect(try await replayed(in: folder)[5] == 4)
        let history = try await folder.history([])
        #expect(history.outputLines.contains { $0.contains("#4") && $0.hasSuffix("3 up-to-date") }, "\(history.outputLines)")
        #expect(history.outputLines.contains { $0.contains("#5") && $0.contains("3 up-to-date; replayed run 4") }, "\(history.outputLines)")

        // A change: the run writes rows of its own, for the tasks it ran and the one it found up to date.
        try folder.write("gamma\n", to: "src/words.txt")
        let rebuilt = try await folder.run()
        #expect(rebuilt.executed == ["a", "b"])
        #expect(await Self.historyRows(of: 6, in: folder).map { $0.split(separator: "|").prefix(2).joined(separator: "|") }
                == ["a|succeeded", "b|succeeded", "c|up-to-date"])
        #expect(await folder.integrityCheck() == "ok")
    }

    @Test func theRecordSurvivesTheDropOfTheOldestRuns() async throws {
        let folder = try await replayingFolder()
        defer { folder.remove() }
        // 50 runs are kept; each replay shares the rows of run 1, the build that recorded the verdict.
        for _ in 0..<50 {
            let run = try await folder.run()
            #expect(run.status == 0)
            #expect(run.upToDate == Self.allTasks)
        }
        let replays = try await replayed(in: folder)
        #expect(replays[52] == 1, "\(replays.sorted { $0.key < $1.key }.suffix(3))")
        let history = try await folder.history([])
        #expect(history.outputLines.contains { $0.contains("#52") && $0.contains("3 up-to-date; replayed run 1: nothing changed") },
                "\(history.outputLines)")
        #expect(await Self.historyRows(of: 1, in: folder).count == 3)
        let kept = await folder.python("""
            import sqlite3, sys
            database = sqlite3.connect(sys.argv[1])
            print(database.execute("SELECT count(*), min(id) FROM runs WHERE id > 1").fetchone(),
                  database.execute("SELECT count(*) FROM runs WHERE id <= 1").fetchone()[0],
                  database.execute("SELECT count(*) FROM task_runs").fetchone()[0])
            """, arguments: [folder.directory.file(".jobgraph/state.db")])
        #expect(kept == "(50, 3) 1 3", "the latest 50 runs are kept, and run 1, whose 3 task rows they share")
        #expect(await folder.integrityCheck() == "ok")
    }
}
