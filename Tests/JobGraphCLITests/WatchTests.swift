import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `run --watch` through the binary: edits to inputs and to the pipeline file, a broken edit, a change
/// while a task runs, and Ctrl-C. The test waits for what jobgraph prints, with a bounded wait, never
/// for a fixed time.
@Suite(.hangLimit(minutes: 2))
struct WatchTests {
    /// `gen` copies a.txt to b.txt, `use` copies b.txt to c.txt, `other` copies x.txt to y.txt; each
    /// declares what it reads and writes, so a rerun executes only what an edit affects.
    private static let pipeline = """
        version: 1
        tasks:
          gen: {run: "cp a.txt b.txt", inputs: [a.txt], outputs: [b.txt]}
          use: {needs: [gen], run: "cp b.txt c.txt", inputs: [b.txt], outputs: [c.txt]}
          other: {run: "cp x.txt y.txt", inputs: [x.txt], outputs: [y.txt]}
        """

    private static func start(_ yaml: String = pipeline, extra: [String] = []) throws -> RunningJobGraph {
        let directory = try ScratchDirectory("jobgraph-watch")
        try directory.write(yaml, to: "p.yaml")
        try directory.write("1\n", to: "a.txt")
        try directory.write("x\n", to: "x.txt")
        return try JobGraphBinary.start(["run", "p.yaml", "--watch", "--progress", "plain", "--events", "events.jsonl"] + extra,
                                        in: directory)
    }

    /// Waits until jobgraph has said `count` times that it watches, i.e. `count` runs are over.
    private static func waitForWatching(_ running: RunningJobGraph, count: Int) async -> Bool {
        await eventually { running.standardOutput.components(separatedBy: "for changes (Ctrl-C stops)").count - 1 >= count }
    }

    /// Every transition and run end in the events file, one line each: what a failed expectation shows.
    private static func transitions(_ running: RunningJobGraph) -> String {
        running.events(in: "events.jsonl").compactMap { event -> String? in
            switch event["event"] as? String {
            case "run-finished": return "run-finished"
            case "transition": return "\(event["task"] ?? "") \(event["from"] ?? "") -> \(event["to"] ?? "") \(event["error"] ?? "")"
            default: return nil
            }
        }.joined(separator: "\n")
    }

    /// Each run's transitions, split at the `run-finished` records.
    /// The transitions of run `index` (0 for the first); none when it has not happened, so that a watch that
    /// fell behind fails its checks instead of crashing the test process (the loaded ThreadSanitizer round at
    /// d8983ec: `Index out of range` ended every test still running).
    private static func run(_ index: Int, of running: RunningJobGraph) -> [[String: Any]] {
        let all = runs(running)
        return index < all.count ? all[index] : []
    }

    private static func runs(_ running: RunningJobGraph) -> [[[String: Any]]] {
        var runs: [[[String: Any]]] = [[]]
        for event in running.events(in: "events.jsonl") {
            switch event["event"] as? String {
            case "run-finished": runs.append([])
            case "transition": runs[runs.count - 1].append(event)
            default: break
            }
        }
        return runs.last?.isEmpty == true ? Array(runs.dropLast()) : runs
    }

    /// Stops the session with Ctrl-C and checks that it ends with 130.
    private static func interrupt(_ running: RunningJobGraph) async throws -> JobGraphBinary.Outcome {
        running.send(SIGINT)
        let outcome = try await running.finish()
        #expect(outcome.status == 130, "\(outcome.standardOutput)\n\(outcome.standardError)")
        return outcome
    }

    @Test func editingAnInputRerunsExactlyTheTasksItAffects() async throws {
        let running = try Self.start()
        defer { running.directory.remove() }
        #expect(await Self.waitForWatching(running, count: 1))
        #expect(RunResult.finalStates(in: Self.run(0, of: running)) == ["gen": "succeeded", "use": "succeeded", "other": "succeeded"])

        let edited = ContinuousClock.now
        try running.directory.write("2\n", to: "a.txt")
        #expect(await Self.waitForWatching(running, count: 2))
        let latency = ContinuousClock.now - edited
        print("watch: edit to rerun ended, as seen by the test: \(latency)")
        #expect(running.standardOutput.contains("change in a.txt: running again\n"))
        #expect(RunResult.finalStates(in: Self.run(1, of: running)) == ["gen": "succeeded", "use": "succeeded", "other": "up-to-date"])
        #expect(running.directory.read("c.txt") == "2\n")

        try running.directory.write("y\n", to: "x.txt")
        #expect(await Self.waitForWatching(running, count: 3))
        #expect(running.standardOutput.contains("change in x.txt: running again\n"))
        #expect(RunResult.finalStates(in: Self.run(2, of: running)) == ["gen": "up-to-date", "use": "up-to-date", "other": "succeeded"])
        // The runs' own writes (b.txt, c.txt, y.txt are outputs) started no run of their own.
        let outcome = try await Self.interrupt(running)
        #expect(Self.runs(running).count == 3, "\(outcome.standardOutput)")
    }

    @Test func editingThePipelineReloadsItAndABrokenEditKeepsWatching() async throws {
        let running = try Self.start()
        defer { running.directory.remove() }
        #expect(await Self.waitForWatching(running, count: 1))

        try running.directory.write(Self.pipeline + "\n  extra: {run: \"touch extra.ran\", neds: [gen]}\n", to: "p.yaml")
        #expect(await eventually { running.standardError.contains("p.yaml:6:35: error: unknown key 'neds' in task 'extra'; did you mean 'needs'?") },
                "\(running.standardError)")
        #expect(await eventually { running.standardOutput.contains("p.yaml has errors; still watching, save a fix to run again\n") })
        // Still watching, with the last good pipeline: an input edit runs it again.
        try running.directory.write("2\n", to: "a.txt")
        #expect(await Self.waitForWatching(running, count: 2))
        #expect(!running.directory.exists("extra.ran"))

        try running.directory.write(Self.pipeline + "\n  extra: {run: \"touch extra.ran\", needs: [gen]}\n", to: "p.yaml")
        #expect(await Self.waitForWatching(running, count: 3))
        #expect(running.standardOutput.contains("change in p.yaml: reloading it and running again\n"))
        #expect(running.directory.exists("extra.ran"))
        #expect(RunResult.finalStates(in: Self.run(2, of: running))["extra"] == "succeeded")
        _ = try await Self.interrupt(running)
    }

    /// An edit of the pipeline brings its own resource totals: a task asking more than one is a broken edit,
    /// and raising the total then runs it. Before, the totals stayed those of the file as first loaded.
    @Test func anEditedPipelinesResourceTotalsAreItsOwn() async throws {
        let running = try Self.start()
        defer { running.directory.remove() }
        #expect(await Self.waitForWatching(running, count: 1))
        let asking = "\n  big: {run: \"touch big.ran\", resources: {licences: 2}}\n"
        try running.directory.write(Self.pipeline.replacingOccurrences(of: "tasks:", with: "resources: {licences: 1}\ntasks:") + asking, to: "p.yaml")
        #expect(await eventually { running.standardOutput.contains("p.yaml has errors; still watching, save a fix to run again\n") },
                "\(running.standardOutput)\(running.standardError)")
        #expect(running.standardError.contains("licences"), "\(running.standardError)")
        #expect(!running.directory.exists("big.ran"))
        try running.directory.write(Self.pipeline.replacingOccurrences(of: "tasks:", with: "resources: {licences: 2}\ntasks:") + asking, to: "p.yaml")
        #expect(await Self.waitForWatching(running, count: 2), "\(running.standardOutput)\(running.standardError)")
        #expect(running.directory.exists("big.ran"))
        _ = try await Self.interrupt(running)
    }

    /// A broken edit of the pipeline and an input edit saved together (one batch of changes): the input's
    /// change still runs the last good pipeline again. It used to be dropped with the broken edit.
    @Test func anInputEditedWithABrokenPipelineEditStillRunsAgain() async throws {
        let running = try Self.start()
        defer { running.directory.remove() }
        #expect(await Self.waitForWatching(running, count: 1))
        try running.directory.write(Self.pipeline + "\n  extra: {run: \"touch extra.ran\", neds: [gen]}\n", to: "p.yaml")
        try running.directory.write("2\n", to: "a.txt")
        #expect(await Self.waitForWatching(running, count: 2), "\(running.standardOutput)\(running.standardError)")
        #expect(running.standardOutput.contains("p.yaml has errors; still watching, save a fix to run again\n"))
        #expect(RunResult.finalStates(in: Self.run(1, of: running))["gen"] == "succeeded", "\(Self.transitions(running))")
        _ = try await Self.interrupt(running)
    }

    @Test func aChangeWhileATaskRunsWaitsForTheRunToEnd() async throws {
        // `gen` waits for a file the test creates, so the second edit surely lands while it executes.
        let yaml = """
            version: 1
            tasks:
              gen: {run: "while [ ! -e release ]; do sleep 0.01; done; rm -f release; cp a.txt b.txt", inputs: [a.txt], outputs: [b.txt]}
            """
        let running = try Self.start(yaml)
        defer { running.directory.remove() }
        #expect(await running.waitForTransitions(to: "executing", count: 1, in: "events.jsonl"))
        try running.directory.write("", to: "release")
        #expect(await Self.waitForWatching(running, count: 1))

        try running.directory.write("2\n", to: "a.txt")
        #expect(await running.waitForTransitions(to: "executing", count: 2, in: "events.jsonl"))
        try running.directory.write("3\n", to: "a.txt")
        // The change is seen, but no run starts while `gen` still executes: the third run's start comes
        // after the second run's end.
        try running.directory.write("", to: "release")
        #expect(await Self.waitForTransitions(running, executing: 3))
        // Each start of `gen` comes after the run before it has finished.
        var startsInARunningRun = 0
        var runIsOpen = false
        for event in running.events(in: "events.jsonl") {
            if event["event"] as? String == "run-finished" { runIsOpen = false }
            if event["to"] as? String == "executing" {
                if runIsOpen { startsInARunningRun += 1 }
                runIsOpen = true
            }
        }
        #expect(startsInARunningRun == 0, "\(Self.transitions(running))\n\(running.standardOutput)")
        try running.directory.write("", to: "release")
        #expect(await Self.waitForWatching(running, count: 3))
        let runs = Self.runs(running)
        #expect(runs.count == 3)
        #expect(RunResult.finalStates(in: runs[2]) == ["gen": "succeeded"])
        #expect(running.directory.read("b.txt") == "3\n")
        _ = try await Self.interrupt(running)
    }

    @Test func aFileInANewSubfolderMatchingAGlobRerunsTheTask() async throws {
        let yaml = """
            version: 1
            tasks:
              list: {run: "find src -name '*.c' | sort > list.txt", inputs: ["src/**/*.c"], outputs: [list.txt]}
            """
        let running = try Self.start(yaml)
        defer { running.directory.remove() }
        try FileManager.default.createDirectory(atPath: running.directory.file("src"), withIntermediateDirectories: true)
        try running.directory.write("", to: "src/a.c")
        #expect(await Self.waitForWatching(running, count: 1))
        // Folder and file at once: the file lands before jobgraph can watch the new folder.
        try FileManager.default.createDirectory(atPath: running.directory.file("src/new/deeper"), withIntermediateDirectories: true)
        try running.directory.write("", to: "src/new/deeper/b.c")
        #expect(await Self.waitForWatching(running, count: 2))
        #expect(running.standardOutput.contains("change in src/new/deeper/b.c: running again\n"), "\(running.standardOutput)")
        #expect(running.directory.read("list.txt") == "src/a.c\nsrc/new/deeper/b.c\n")
        // And a file added later in that folder, now watched.
        try running.directory.write("", to: "src/new/deeper/c.c")
        #expect(await Self.waitForWatching(running, count: 3))
        #expect(running.directory.read("list.txt") == "src/a.c\nsrc/new/deeper/b.c\nsrc/new/deeper/c.c\n")
        _ = try await Self.interrupt(running)
    }

    private static func waitForTransitions(_ running: RunningJobGraph, executing count: Int) async -> Bool {
        await running.waitForTransitions(to: "executing", count: count, in: "events.jsonl")
    }

    @Test func ctrlCWhileATaskRunsEndsWith130AndLeavesNoProcess() async throws {
        let yaml = """
            version: 1
            tasks:
              long: {run: "exec sleep 300.651", inputs: [a.txt], outputs: [never.txt]}
            """
        let running = try Self.start(yaml)
        defer { running.directory.remove() }
        #expect(await eventually { !ProcessTable.living(withArgument: "300.651").isEmpty })
        let outcome = try await Self.interrupt(running)
        #expect(outcome.outputLines.last == "interrupted by SIGINT")
        #expect(!outcome.standardOutput.contains("for changes"))
        #expect(ProcessTable.living(withArgument: "300.651").isEmpty)
    }

    @Test func ctrlCWhileWatchingEndsWith130() async throws {
        let running = try Self.start()
        defer { running.directory.remove() }
        #expect(await Self.waitForWatching(running, count: 1))
        _ = try await Self.interrupt(running)
        #expect(Self.runs(running).count == 1)
    }
}
