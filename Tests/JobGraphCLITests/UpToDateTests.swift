import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Up-to-date checks through the built binary, as a user reruns a build (contract: `inputs`, `outputs`,
/// `--force`, "Killing jobgraph at any moment never corrupts it"): a rerun does exactly the work whose
/// definition, inputs or outputs changed, and what depends on what it changed.
@Suite(.hangLimit(minutes: 1))
struct UpToDateTests {
    /// Two independent chains: `upper` -> `count` reads files, `greet` -> `banner` reads the environment.
    /// Each later task's only input is the earlier one's output, so it reruns only when that changes.
    static let pipeline = """
        version: 1
        tasks:
          upper:
            run: mkdir -p build && cat src/*.txt | tr a-z A-Z > build/upper.txt
            inputs: ["src/**/*.txt"]
            outputs: [build/upper.txt]
          count:
            needs: [upper]
            run: wc -l < build/upper.txt > build/count.txt
            inputs: [build/upper.txt]
            outputs: [build/count.txt]
          greet:
            run: mkdir -p build && echo "$GREETING" > build/greet.txt
            env: {GREETING: hello}
            outputs: [build/greet.txt]
          banner:
            needs: [greet]
            run: cat build/greet.txt build/greet.txt > build/banner.txt
            inputs: [build/greet.txt]
            outputs: [build/banner.txt]
        """

    static let allTasks: Set = ["upper", "count", "greet", "banner"]

    /// A folder where the pipeline has run once, successfully.
    private func builtFolder(_ yaml: String = pipeline) async throws -> PipelineFolder {
        let folder = try PipelineFolder(yaml)
        try folder.write("alpha\nbeta\n", to: "src/words.txt")
        let first = try await folder.run()
        #expect(first.status == 0, "\(first.outcome.standardError)")
        #expect(first.executed == Self.allTasks)
        return folder
    }

    @Test func aSecondRunIsAllUpToDateAndTouchesNothing() async throws {
        let folder = try await builtFolder()
        defer { folder.remove() }
        let outputs = ["build/upper.txt", "build/count.txt", "build/greet.txt", "build/banner.txt"]
        let before = outputs.map(folder.modificationTime(of:))

        let second = try await folder.run()
        #expect(second.status == 0)
        #expect(second.upToDate == Self.allTasks)
        #expect(second.outcome.outputLines.contains { $0.hasPrefix("4 up-to-date in ") }, "\(second.outcome.outputLines)")
        #expect(outputs.map(folder.modificationTime(of:)) == before)
        #expect(folder.directory.read("build/upper.txt") == "ALPHA\nBETA\n")
    }

    @Test func touchingInputsWithoutChangingTheirContentKeepsEverythingUpToDate() async throws {
        let folder = try await builtFolder()
        defer { folder.remove() }
        try folder.setModificationTime(of: "src/words.txt", to: Date().addingTimeInterval(3600))
        try folder.setModificationTime(of: "build/upper.txt", to: Date().addingTimeInterval(7200))

        let rerun = try await folder.run()
        #expect(rerun.upToDate == Self.allTasks)
        // The new times were recorded: the files are not read again on the next run either, and still match.
        let again = try await folder.run()
        #expect(again.upToDate == Self.allTasks)
    }

    @Test func changingAnInputRerunsItsTaskAndWhatReadsItsOutput() async throws {
        let folder = try await builtFolder()
        defer { folder.remove() }
        try folder.write("alpha\nbeta\ngamma\n", to: "src/words.txt")

        let rerun = try await folder.run()
        #expect(rerun.status == 0)
        #expect(rerun.executed == ["upper", "count"])
        #expect(rerun.upToDate == ["greet", "banner"])
        #expect(folder.directory.read("build/count.txt")?.trimmingCharacters(in: .whitespaces) == "3\n")
    }

    @Test func aNewFileMatchingADoubleStarInputRerunsTheTaskButNotDependentsWhoseInputsStayTheSame() async throws {
        let folder = try await builtFolder()
        defer { folder.remove() }
        // Matched by `src/**/*.txt`, but empty: `upper` reruns and writes the same bytes again.
        try folder.write("", to: "src/deeper/still/empty.txt")

        let rerun = try await folder.run()
        #expect(rerun.executed == ["upper"])
        #expect(rerun.upToDate == ["count", "greet", "banner"])
    }

    @Test func changingTheCommandRerunsThatTaskAndWhatReadsItsOutput() async throws {
        let folder = try await builtFolder()
        defer { folder.remove() }
        try folder.rewrite(Self.pipeline.replacingOccurrences(of: "tr a-z A-Z", with: "tr a-z A-Z | sort -r"))

        let rerun = try await folder.run()
        #expect(rerun.executed == ["upper", "count"])
        #expect(rerun.upToDate == ["greet", "banner"])
        #expect(folder.directory.read("build/upper.txt") == "BETA\nALPHA\n")
    }

    @Test func changingATasksEnvValueRerunsItAndWhatReadsItsOutput() async throws {
        let folder = try await builtFolder()
        defer { folder.remove() }
        try folder.rewrite(Self.pipeline.replacingOccurrences(of: "GREETING: hello", with: "GREETING: howdy"))

        let rerun = try await folder.run()
        #expect(rerun.executed == ["greet", "banner"])
        #expect(rerun.upToDate == ["upper", "count"])
        #expect(folder.directory.read("build/banner.txt") == "howdy\nhowdy\n")
    }

    @Test func changingThePipelinesEnvOrAnExportedVarRerunsEveryShellTaskSinceEachGetsIt() async throws {
        let header = "version: 1\nenv: {MODE: fast}\nvars: {LEVEL: \"0\"}\nexport: [LEVEL]\n"
        let folder = try await builtFolder(Self.pipeline.replacingOccurrences(of: "version: 1\n", with: header))
        defer { folder.remove() }
        #expect(try await folder.run().upToDate == Self.allTasks)
        try folder.rewrite(Self.pipeline.replacingOccurrences(
            of: "version: 1\n", with: header.replacingOccurrences(of: "fast", with: "thorough")))
        #expect(try await folder.run().executed == Self.allTasks)
        #expect(try await folder.run().upToDate == Self.allTasks)

        // Contract: a var under `export` is in every task's environment, so a new value is a change too.
        #expect(try await folder.run(["--var", "LEVEL=1"]).executed == Self.allTasks)
        #expect(try await folder.run(["--var", "LEVEL=1"]).upToDate == Self.allTasks)
    }

    @Test func theCallersOwnEnvironmentIsNotPartOfADefinition() async throws {
        let folder = try await builtFolder()
        defer { folder.remove() }
        var environment = JobGraphBinary.environment
        environment["SOMETHING_UNRELATED"] = "changes every run"
        let rerun = try await folder.run(environment: environment)
        #expect(rerun.upToDate == Self.allTasks)
    }

    @Test func aDeletedOutputRerunsItsTaskWhileDependentsAreJudgedOnTheirOwn() async throws {
        let folder = try await builtFolder()
        defer { folder.remove() }
        try folder.delete("build/greet.txt")
        try folder.delete("build/count.txt")

        let rerun = try await folder.run()
        #expect(rerun.executed == ["greet", "count"])
        // `greet` wrote the same greeting again, so what `banner` reads did not change.
        #expect(rerun.upToDate == ["upper", "banner"])
        #expect(folder.directory.exists("build/greet.txt"))
        #expect(folder.directory.exists("build/count.txt"))
    }

    @Test func forceRerunsEverythingAndTheNextPlainRunIsUpToDateAgain() async throws {
        let folder = try await builtFolder()
        defer { folder.remove() }
        let forced = try await folder.run(["--force"])
        #expect(forced.status == 0)
        #expect(forced.executed == Self.allTasks)
        #expect(forced.upToDate.isEmpty)

        let plain = try await folder.run()
        #expect(plain.upToDate == Self.allTasks)
    }

    @Test func aTaskWithOutputsButNoInputsRunsOnlyWhenAnOutputIsMissing() async throws {
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              stamp: {run: "date +%s%N > stamp.txt && mkdir -p logs && touch logs/a.log", outputs: [stamp.txt, "logs/*.log"]}
              unchecked: {run: "true"}
            """)
        defer { folder.remove() }
        let first = try await folder.run()
        #expect(first.executed == ["stamp", "unchecked"])
        let stamp = folder.directory.read("stamp.txt")

        try folder.write("an unrelated file", to: "notes.txt")
        let second = try await folder.run()
        #expect(second.upToDate == ["stamp"])
        // A task that declares neither inputs nor outputs has nothing to tell that its work is done.
        #expect(second.executed == ["unchecked"])
        #expect(folder.directory.read("stamp.txt") == stamp)

        try folder.delete("logs/a.log")
        let third = try await folder.run()
        #expect(third.executed == ["stamp", "unchecked"])
        try folder.delete("stamp.txt")
        let fourth = try await folder.run()
        #expect(fourth.executed == ["stamp", "unchecked"])
    }

    @Test func aFailedTaskRerunsEvenThoughItLeftItsOutputBehind() async throws {
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              build: {run: "echo partial > out.txt; test -e fixed", outputs: [out.txt]}
            """)
        defer { folder.remove() }
        let failed = try await folder.run()
        #expect(failed.status == 1)
        #expect(folder.directory.exists("out.txt"))

        let again = try await folder.run()
        #expect(again.finalStates == ["build": "failed"], "a failure must not count as done")

        try folder.write("", to: "fixed")
        let fixed = try await folder.run()
        #expect(fixed.finalStates == ["build": "succeeded"])
        let done = try await folder.run()
        #expect(done.finalStates == ["build": "up-to-date"])
    }

    // MARK: - kill -9

    @Test func killNineMidRunLeavesASoundDatabaseAndTheRerunDoesWhatDidNotFinish() async throws {
        // `slow` writes its output first, then waits for `release`: after the kill the file is there, half made,
        // and only the history can tell that the task never finished. `release` is not an input, so the rerun
        // goes through without a change to its definition. Not a sleep: under load (the ThreadSanitizer pass
        // beside stress-ng) a 30 s sleep ended before the test saw the task executing, and it was not killed.
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              a: {run: "echo a > a.out", outputs: [a.out]}
              b: {needs: [a], run: "cat a.out > b.out", inputs: [a.out], outputs: [b.out]}
              side: {run: "echo side > side.out", outputs: [side.out]}
              slow:
                needs: [b]
                run: echo partial > slow.out; echo $$ > slow.pid; until [ -e release ]; do sleep 0.05; done; echo done > slow.out
                inputs: [b.out]
                outputs: [slow.out]
              after: {needs: [slow], run: "cat slow.out > after.out", inputs: [slow.out], outputs: [after.out]}
            """)
        defer { folder.remove() }
        let events = folder.nextEventsFile()
        let running = try JobGraphBinary.start(["run", "p.yaml", "--jobs", "2", "--progress", "plain", "--events", events],
                                               in: folder.directory)
        let reachedSlow = await eventually {
            let states = RunResult.finalStates(in: running.events(in: events))
            return states["slow"] == "executing" && states["side"] == "succeeded" && folder.directory.exists("slow.pid")
        }
        #expect(reachedSlow)
        running.send(SIGKILL)
        let killed = try await running.finish()
        #expect(killed.status == 128 + SIGKILL)
        // SIGKILL leaves the task's process group behind (nothing can stop that); end it before going on.
        if let group = folder.directory.read("slow.pid").flatMap({ pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
            kill(-group, SIGKILL)
        }

        #expect(await folder.integrityCheck() == "ok")
        let history = try await folder.history(["--json"])
        #expect(history.status == 0)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(history.standardOutput.utf8)) as? [String: Any])
        let runs = try #require(report["runs"] as? [[String: Any]])
        #expect(runs.count == 1)
        #expect(runs.first?["outcome"] as? String == "interrupted")
        let text = try await folder.history()
        #expect(text.outputLines.contains { $0.contains("#1") && $0.contains("interrupted") }, "\(text.outputLines)")

        try folder.write("", to: "release")
        let rerun = try await folder.run(["--jobs", "2"])
        #expect(rerun.status == 0, "\(rerun.outcome.standardError)")
        #expect(rerun.upToDate == ["a", "b", "side"])
        #expect(rerun.executed == ["slow", "after"])
        #expect(folder.directory.read("after.out") == "done\n")
        #expect(await folder.integrityCheck() == "ok")

        let outcomes = try await folder.history(["--json"])
        let finalReport = try #require(try JSONSerialization.jsonObject(with: Data(outcomes.standardOutput.utf8)) as? [String: Any])
        #expect((finalReport["runs"] as? [[String: Any]])?.compactMap { $0["outcome"] as? String } == ["succeeded", "interrupted"])
    }

    @Test func killNineAtRandomMomentsNeverCorruptsTheState() async throws {
        var tasks = (0..<24).map { number in
            let needs = number >= 4 ? ", needs: [t\(number - 4)]" : ""
            return "  t\(number): {run: \"echo \(number) > out\(number).txt\", outputs: [out\(number).txt]\(needs)}"
        }
        // Holds every run open until the test lets it end: 24 short tasks, or a rerun with nothing to do,
        // could otherwise be over before the kill arrives (it was, in all six rounds, on a busy machine).
        tasks.append("""
              gate: {needs: [t20, t21, t22, t23], outputs: [gate.txt],
                     run: "echo $$ > gate.pid; while [ ! -f open ]; do sleep 0.01; done; echo > gate.txt"}
            """)
        let folder = try PipelineFolder("version: 1\ntasks:\n" + tasks.joined(separator: "\n"))
        defer { folder.remove() }
        var generator = SystemRandomNumberGenerator()
        var interrupted = 0
        for round in 0..<6 {
            // Killed after a random number of transitions: while tasks start, end and are recorded.
            let events = folder.nextEventsFile()
            let transitions = Int.random(in: 1...60, using: &generator)
            let running = try JobGraphBinary.start(["run", "p.yaml", "--jobs", "2", "--progress", "plain", "--events", events],
                                                   in: folder.directory)
            _ = await eventually { running.events(in: events).count >= transitions }
            running.send(SIGKILL)
            if try await running.finish().status == 128 + SIGKILL { interrupted += 1 }
            // SIGKILL leaves the task's process group behind (nothing can stop that); end the gate's.
            if let group = folder.directory.read("gate.pid").flatMap({ pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
                kill(-group, SIGKILL)
                unlink(folder.directory.file("gate.pid"))
            }
            #expect(await folder.integrityCheck() == "ok", "round \(round), killed after \(transitions) transitions")
            let history = try await folder.history(["--json"])
            #expect(history.status == 0, "round \(round): \(history.standardError)")
        }
        #expect(interrupted == 6, "a run ended before its kill")
        try folder.directory.write("", to: "open")
        let complete = try await folder.run()
        #expect(complete.status == 0, "\(complete.outcome.standardError)")
        #expect(complete.finalStates.count == 25)
        #expect(complete.finalStates.values.allSatisfy { $0 == "succeeded" || $0 == "up-to-date" })
        let settled = try await folder.run()
        #expect(settled.upToDate.count == 25)
        #expect((0..<24).allSatisfy { folder.directory.read("out\($0).txt") == "\($0)\n" })
    }
}
