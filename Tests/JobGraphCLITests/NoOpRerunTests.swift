import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Reruns that should find every task up to date, and changes that should not, through the built binary
/// (docs/state.md): every rerun checks its tasks, and does exactly the work a change calls for.
@Suite(.hangLimit(minutes: 3))
struct NoOpRerunTests {
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

    /// A folder whose pipeline was built (run 1) and rerun (run 2, every task up to date).
    private func rerunFolder() async throws -> PipelineFolder {
        let folder = try PipelineFolder(Self.pipeline)
        try folder.write("alpha\nbeta\n", to: "src/words.txt")
        let first = try await folder.run()
        #expect(first.status == 0, "\(first.outcome.standardError)")
        #expect(first.executed == Self.allTasks)
        let second = try await folder.run()
        #expect(second.upToDate == Self.allTasks)
        return folder
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

    /// The task graph's node titles in a `jobgraph report` page: "a: up-to-date".
    private static func taskTitles(in page: String) -> [String] {
        page.split(separator: "\n").filter { $0.hasPrefix("<g class=\"node\"><title>") }.compactMap { line in
            line.split(separator: ">").dropFirst(2).first?.split(separator: "<").first.map(String.init)
        }
    }

    /// `task|state|attempts` for each of the run's history rows, read by python3's own SQLite.
    private static func historyRows(of run: Int, in folder: PipelineFolder) async -> [String] {
        await folder.python("""
            import sqlite3, sys
            connection = sqlite3.connect(sys.argv[1])
            for row in connection.execute("SELECT task, state, attempts FROM task_runs WHERE run_id = ? ORDER BY task", (int(sys.argv[2]),)):
                print("|".join(str(value) for value in row))
            """, arguments: [folder.directory.file(".jobgraph/state.db"), String(run)])
            .split(separator: "\n").map(String.init)
    }

    @Test func theRerunAfterABuildFindsEveryTaskUpToDateAndRecordsIt() async throws {
        let folder = try await rerunFolder()
        defer { folder.remove() }
        let rerun = try await folder.run()
        #expect(rerun.status == 0)
        #expect(rerun.upToDate == Self.allTasks)
        // As ninja says "no work to do": plain progress prints no line for a task found up to date before the
        // run, though its events are all there; `--explain` prints them, with why.
        #expect(rerun.outcome.outputLines.count == 2, "\(rerun.outcome.outputLines)")
        #expect(rerun.outcome.outputLines.first?.hasSuffix(" running p.yaml: 3 tasks, at most 2 at once") == true)
        #expect(rerun.outcome.outputLines.last?.hasPrefix("3 up-to-date in ") == true, "\(rerun.outcome.outputLines)")
        #expect(rerun.events.filter { $0["event"] as? String == "transition" }.count == 9)
        let explained = try await folder.run(["--explain"])
        #expect(explained.outcome.outputLines.contains { $0.hasSuffix("] b  ready -> executing  (up-to-date)") },
                "\(explained.outcome.outputLines)")
        #expect(Self.comparable(explained.events) == Self.comparable(rerun.events))
        let again = try await folder.run()
        #expect(Self.comparable(again.events) == Self.comparable(rerun.events))
        #expect(Self.comparable(again.outcome.outputLines) == Self.comparable(rerun.outcome.outputLines))

        #expect(await Self.historyRows(of: 1, in: folder) == ["a|succeeded|1", "b|succeeded|1", "c|succeeded|1"])
        #expect(await Self.historyRows(of: 3, in: folder) == ["a|up-to-date|0", "b|up-to-date|0", "c|up-to-date|0"])
        #expect(await Self.historyRows(of: 4, in: folder) == ["a|up-to-date|0", "b|up-to-date|0", "c|up-to-date|0"])
        let history = try await folder.history()
        #expect(history.status == 0)
        #expect(history.outputLines.contains { $0.contains("#3") && $0.hasSuffix("3 up-to-date") }, "\(history.outputLines)")
        #expect(history.outputLines.contains { $0.contains("#1") && $0.hasSuffix("3 succeeded") }, "\(history.outputLines)")
        let report = try await JobGraphBinary.run(["report", "p.yaml", "--run", "3", "-o", "3.html"], in: folder.directory)
        #expect(report.status == 0, "\(report.standardError)")
        let tasksShown = Self.taskTitles(in: folder.directory.read("3.html") ?? "")
        #expect(tasksShown.count == 3 && tasksShown.allSatisfy { $0.hasSuffix(": up-to-date") }, "\(tasksShown)")
    }

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

    @Test func anEditOfCommentsOrLayoutLeavesEveryTaskUpToDate() async throws {
        let folder = try await rerunFolder()
        defer { folder.remove() }
        try folder.addComment("a note")
        #expect(try await folder.run().upToDate == Self.allTasks, "a comment changes no task")
        try folder.rewrite(Self.pipelineLaidOutOtherwise)
        #expect(try await folder.run().upToDate == Self.allTasks, "flow style, indentation and blank lines change no task either")
        try folder.rewrite(Self.pipelineLaidOutOtherwise.replacingOccurrences(of: "{greeting: hello}", with: "{greeting: 'hello'}"))
        #expect(try await folder.run().upToDate == Self.allTasks)

        // A change to a task, in a file that also gained a comment: that task runs.
        try folder.rewrite(Self.pipelineLaidOutOtherwise.replacingOccurrences(of: "{{ greeting }}", with: "{{ greeting }}!") + "# hi\n")
        let changed = try await folder.run()
        #expect(changed.executed == ["c"], "\(changed.outcome.outputLines)")
        #expect(folder.directory.read("build/c.txt") == "hello!\n")
    }

    @Test func aRerunExecutesWhatItsLastRunLeftUndoneOrCannotKnow() async throws {
        // Each pipeline is built, changed as it says, and rerun: the tasks named must execute again.
        let cases: [(name: String, pipeline: String, change: @Sendable (PipelineFolder) throws -> Void, executed: Set<String>)] = [
            // A task failed: its rerun runs it again.
            ("failed", """
                version: 1
                tasks:
                  a: {run: "touch a.out; test -f go", outputs: [a.out], allow_failure: true}
                """, { _ in }, ["a"]),
            // An input named by a pattern: a new file that matches it is for the rerun to find.
            ("pattern", """
                version: 1
                tasks:
                  a: {run: "mkdir -p src && touch src/x.txt", outputs: [src/x.txt]}
                  b: {needs: [a], run: cat src/*.txt > b.out, inputs: ["src/*.txt"], outputs: [b.out]}
                """, { folder in try folder.write("y\n", to: "src/y.txt") }, ["b"]),
            // A task without inputs or outputs runs every time.
            ("untracked", """
                version: 1
                tasks:
                  a: {run: touch a.out, outputs: [a.out]}
                  b: {run: echo b}
                """, { _ in }, ["b"]),
        ]
        for (name, pipeline, change, executed) in cases {
            let folder = try PipelineFolder(pipeline)
            defer { folder.remove() }
            _ = try await folder.run()
            try change(folder)
            #expect(try await folder.run().executed == executed, "\(name)")
        }
    }

    @Test func aFileAddedToAFolderThatIsAnInputRerunsItsTask() async throws {
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
        #expect(folder.directory.read("all.txt") == "a\nb\n")
    }

    @Test func aPipelineHookRunsOnEveryRerun() async throws {
        let folder = try PipelineFolder("""
            version: 1
            on_success: echo done >> hook.log
            tasks:
              a: {run: touch a.out, outputs: [a.out]}
            """)
        defer { folder.remove() }
        for _ in 0..<3 { #expect(try await folder.run().status == 0) }
        #expect(folder.directory.read("hook.log") == "done\ndone\ndone\n", "a no-op rerun runs the hook too")
    }

    /// A change a rerun depends on, and the tasks it must then execute.
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
        // Only `c` uses `greeting` (issue 35, bug 5: a var reruns only the tasks that use it).
        Invalidation(name: "a --var changed", executed: ["c"], change: { _ in }, arguments: ["--var", "greeting=hi"]),
        Invalidation(name: "--force", executed: ["a", "b", "c"], change: { _ in }, arguments: ["--force"]),
    ]

    @Test(arguments: invalidations)
    func aChangeGivesARunThatDoesWhatItMust(_ invalidation: Invalidation) async throws {
        let folder = try await rerunFolder()
        defer { folder.remove() }
        try invalidation.change(folder)
        let changed = try await folder.run(invalidation.arguments, environment: invalidation.environment)
        #expect(changed.status == 0, "\(changed.outcome.standardError)")
        #expect(changed.executed == invalidation.executed)
        #expect(changed.upToDate == Self.allTasks.subtracting(invalidation.executed))
        // The same command again finds everything up to date (after `--force`, a plain run does).
        let again = try await folder.run(invalidation.arguments == ["--force"] ? [] : invalidation.arguments,
                                         environment: invalidation.environment)
        #expect(again.upToDate == Self.allTasks)
    }

    /// The caller's environment reaches no task's definition (only the variables the pipeline sets do), so
    /// a rerun from another shell, with a variable more and one changed, finds every task up to date.
    @Test func anotherEnvironmentLeavesEveryTaskUpToDate() async throws {
        let folder = try await rerunFolder()
        defer { folder.remove() }
        var environment = JobGraphBinary.environment
        environment["UNRELATED"] = "1"
        environment["_"] = "/usr/bin/time"
        #expect(try await folder.run(environment: environment).upToDate == Self.allTasks)
        // A variable the pipeline sets for its tasks is the pipeline's value, whatever the caller's.
        environment["greeting"] = "bye"
        #expect(try await folder.run(environment: environment).upToDate == Self.allTasks)
    }

    /// Each pipeline's up-to-date records are its own (docs/state.md, "The run lock"): they were keyed by
    /// task id alone, so q.yaml's `a` replaced p.yaml's.
    @Test func anotherPipelineInTheFolderWithATaskOfTheSameNameLeavesItsRecordAlone() async throws {
        let folder = try await rerunFolder()
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
        let again = try await folder.run()
        #expect(again.executed.isEmpty, "p.yaml's 'a' keeps its own record")
        #expect(again.upToDate == ["a", "b", "c"])
    }

    /// The last of a repeated `--var` wins (docs/cli.md), in the command a task runs and so in its
    /// definition: a rerun whose last value differs runs the task, whatever values came before. (The issue's
    /// file declared no `vars`; `--var` now sets only a declared variable.)
    @Test func aRerunWhoseLastRepeatedVarDiffersRunsTheTask() async throws {
        let folder = try PipelineFolder("""
            version: 1
            vars: {X: ""}
            tasks:
              write:
                run: echo "{{ X }}" > out.txt
                inputs: [p.yaml]
                outputs: [out.txt]
            """)
        defer { folder.remove() }
        let first = try await folder.run(["--var", "X=b", "--var", "X=a"])
        #expect(first.status == 0, "\(first.outcome.standardError)")
        #expect(first.executed == ["write"])
        #expect(folder.directory.read("out.txt") == "a\n")

        let second = try await folder.run(["--var", "X=a", "--var", "X=b"])
        #expect(second.status == 0, "\(second.outcome.standardError)")
        #expect(second.executed == ["write"], "the same values, another last one: \(second.outcome.outputLines)")
        #expect(folder.directory.read("out.txt") == "b\n")

        #expect(try await folder.run(["--var", "X=b"]).upToDate == ["write"], "X is b, as the last run wrote")
    }
}
