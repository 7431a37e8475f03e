import Foundation
import JobGraphTestSupport
import Testing

/// Why a task runs, through the built binary (issue 13, "Reasons"): `run --dry-run` names the reason in a
/// column and `--dry-run --json` per task; the run then does what the dry run said, and its `--explain`
/// lines and events carry the same reason.
@Suite(.hangLimit(minutes: 2))
struct ReasonTests {
    /// One task per reason, each edited between two runs so that the second dry run must name it.
    static func catalogue(server: String, second: Bool) -> String {
        """
        version: 1
        vars:
          server: \(server)
        tasks:
          fresh:
            run: echo fresh > fresh.txt
            outputs: [fresh.txt]
          edited:
            run: cat in/edited.txt > edited.out
            inputs: [in/edited.txt]
            outputs: [edited.out]
          grown:
            run: cat src/*.txt > grown.out
            inputs: ["src/*.txt"]
            outputs: [grown.out]
          shrunk:
            run: cat lib/*.txt > shrunk.out
            inputs: ["lib/*.txt"]
            outputs: [shrunk.out]
          command:
            run: echo \(second ? "two" : "one") > command.out
            outputs: [command.out]
          environment:
            run: echo "$FOO" > environment.out
            env: {FOO: \(second ? "two" : "one")}
            outputs: [environment.out]
          fetch:
            download: {url: "{{ server }}/\(second ? "two" : "one")", to: fetched.bin}
          deleted:
            run: mkdir -p out && echo b > out/b
            outputs: [out/b]
          loose:
            run: echo loose
          flaky:
            run: test -f fixed && echo ok > flaky.out
            outputs: [flaky.out]
          later:
            needs: [edited]
            run: cat edited.out > later.out
            inputs: [edited.out]
            outputs: [later.out]
        \(second ? "  newcomer:\n    run: echo new > newcomer.out\n    outputs: [newcomer.out]\n" : "")
        """
    }

    /// What the second dry run of the catalogue must say, task by task.
    static let catalogueReasons: [String: String] = [
        "fresh": "up-to-date",
        "edited": "input 'in/edited.txt' changed",
        "grown": "input 'src/b.txt' added",
        "shrunk": "input 'lib/b.txt' removed",
        "command": "command changed",
        "environment": "environment 'FOO' changed",
        "fetch": "action parameter 'url' changed",
        "deleted": "output 'out/b' missing",
        "loose": "no inputs or outputs declared (always runs)",
        "flaky": "no recorded success",
        "newcomer": "never ran",
        "later": "may run: it needs 'edited', which will run",
    ]

    @Test func theDryRunNamesEveryReasonAndTheRunAndItsEventsSayTheSame() async throws {
        let server = try LoopbackHTTPServer(routes: ["/one": .body(Array("one".utf8)), "/two": .body(Array("two".utf8))])
        defer { server.stop() }
        let folder = try PipelineFolder(Self.catalogue(server: server.url(""), second: false))
        defer { folder.remove() }
        try folder.write("edited\n", to: "in/edited.txt")
        try folder.write("a\n", to: "src/a.txt")
        try folder.write("a\n", to: "lib/a.txt")
        try folder.write("b\n", to: "lib/b.txt")

        // Before any run: nothing is on record, and no state is made by looking.
        let before = try await dryRun(in: folder)
        #expect(before["fresh"]?.reason == "never ran")
        #expect(before["fetch"]?.reason == "never ran")
        #expect(before["loose"]?.reason == "no inputs or outputs declared (always runs)")
        #expect(before["later"]?.reason == "may run: it needs 'edited', which will run")
        #expect(before["later"]?.decision == "may-run")
        #expect(!FileManager.default.fileExists(atPath: folder.directory.file(".jobgraph")))

        let first = try await folder.run(["--keep-going"])
        #expect(first.status == 1, "flaky fails: \(first.outcome.standardOutput)")
        #expect(first.finalStates["flaky"] == "failed")

        try folder.write("edited again\n", to: "in/edited.txt")
        try folder.write("b\n", to: "src/b.txt")
        try folder.delete("lib/b.txt")
        try folder.delete("out/b")
        try folder.rewrite(Self.catalogue(server: server.url(""), second: true))

        let dry = try await dryRun(in: folder)
        #expect(dry.mapValues(\.reason) == Self.catalogueReasons)
        #expect(dry["fresh"]?.decision == "up-to-date")
        #expect(dry["edited"]?.decision == "runs")

        // The table says the same, in its last column.
        let table = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run"], in: folder.directory)
        #expect(table.status == 0)
        #expect(table.outputLines.dropFirst().first?.hasSuffix(" reason") == true, "\(table.outputLines)")
        for (task, reason) in Self.catalogueReasons {
            #expect(table.outputLines.contains { $0.contains(" \(task) ") && $0.hasSuffix("  " + reason) }, "\(task): \(table.outputLines)")
        }

        let forcedPlan = try await dryRun(in: folder, ["--force"])
        #expect(Set(forcedPlan.values.map(\.reason)) == ["--force"])

        // The run does what the dry run said, and says why on the line where each task starts.
        try folder.write("", to: "fixed")
        let run = try await folder.run(["--explain"])
        #expect(run.status == 0, "\(run.outcome.standardOutput)")
        #expect(run.upToDate == ["fresh"])
        let reasons = Self.startReasons(in: run.events)
        for (task, reason) in Self.catalogueReasons {
            #expect(reasons[task] == reason, "\(task)")
        }
        #expect(run.outcome.outputLines.contains { $0.hasSuffix("] edited  ready -> executing  (input 'in/edited.txt' changed)") },
                "\(run.outcome.outputLines)")
        #expect(run.outcome.outputLines.contains { $0.hasSuffix("] fetch  ready -> executing  (action parameter 'url' changed)") })
        // `later` was checked at its start, once `edited` had rewritten its input: its end says why it ran.
        #expect(run.outcome.outputLines.contains { $0.contains("] later  executing -> succeeded  (") && $0.hasSuffix(", input 'edited.out' changed)") },
                "\(run.outcome.outputLines)")
        let laterEnd = run.events.last { $0["task"] as? String == "later" }
        #expect(laterEnd?["reason"] as? String == "input 'edited.out' changed")
        // Every reason an event carries is on the `--explain` line of the same transition.
        for event in run.events {
            guard let task = event["task"] as? String, let from = event["from"] as? String, let to = event["to"] as? String,
                  let reason = event["reason"] as? String else { continue }
            let line = "] \(task)  \(from) -> \(to)  ("
            #expect(run.outcome.outputLines.contains { $0.contains(line) && ($0.hasSuffix(" " + reason + ")") || $0.hasSuffix("(" + reason + ")") || reason == to) },
                    "\(line)\(reason)")
        }

        let forced = try await folder.run(["--force", "--explain"])
        #expect(forced.status == 0)
        #expect(Set(Self.startReasons(in: forced.events).values) == ["--force"])
        #expect(forced.outcome.outputLines.contains { $0.hasSuffix("] fresh  ready -> executing  (--force)") })
    }

    /// The issue's own steps: `gen` writes `a.txt`, `use` reads it, the user edits `a.txt`.
    @Test func editingWhatATaskWroteRerunsOnlyItsReader() async throws {
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              gen:
                run: echo generated > a.txt
                outputs: [a.txt]
              use:
                needs: [gen]
                run: cat a.txt > b.txt
                inputs: [a.txt]
                outputs: [b.txt]
            """)
        defer { folder.remove() }
        #expect(try await folder.run().status == 0)
        try folder.write("edited by hand\n", to: "a.txt")

        let table = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run"], in: folder.directory)
        #expect(table.outputLines.contains { $0.contains(" gen ") && $0.hasSuffix("  up-to-date") }, "\(table.outputLines)")
        #expect(table.outputLines.contains { $0.contains(" use ") && $0.hasSuffix("  input 'a.txt' changed") }, "\(table.outputLines)")

        let explained = try await JobGraphBinary.run(["explain", "p.yaml", "use"], in: folder.directory)
        #expect(explained.status == 0)
        #expect(explained.outputLines == ["use: runs because input 'a.txt' changed", "  gen: up-to-date"])

        let run = try await folder.run()
        #expect(run.upToDate == ["gen"])
        #expect(run.executed == ["use"])
        #expect(folder.directory.read("b.txt") == "edited by hand\n")
    }

    /// The dry run's verdicts are what the run then does, task by task, over many edited states of a
    /// 30-task pipeline: every task it calls up to date ends up to date, every task it says runs executes,
    /// and the run's events give the dry run's reasons.
    @Test func theDryRunAgreesWithTheRunOverRandomEdits() async throws {
        var random = SplitMix64(seed: 13)
        var graph = RandomPipeline(taskCount: 30, random: &random)
        let folder = try PipelineFolder(graph.yaml())
        defer { folder.remove() }
        for task in 0..<graph.taskCount { try folder.write("source \(task)\n", to: graph.source(task)) }
        var decisions: [String: Int] = [:]
        for state in 0..<12 {
            if state > 0 { try graph.edit(folder, random: &random, round: state) }
            let dry = try await dryRun(in: folder)
            #expect(dry.count == graph.taskCount)
            let run = try await folder.run()
            #expect(run.status == 0, "state \(state): \(run.outcome.standardOutput)")
            let reasons = Self.startReasons(in: run.events)
            for (task, verdict) in dry {
                decisions[verdict.decision, default: 0] += 1
                let final = run.finalStates[task]
                switch verdict.decision {
                case "up-to-date": #expect(final == "up-to-date", "state \(state): \(task) \(verdict)")
                case "runs": #expect(final == "succeeded", "state \(state): \(task) \(verdict)")
                default: #expect(final == "succeeded" || final == "up-to-date", "state \(state): \(task)")
                }
                #expect(reasons[task] == verdict.reason, "state \(state): \(task)")
            }
        }
        // The edits reached every kind of verdict, so the agreement above was tested on each.
        #expect(decisions["up-to-date", default: 0] > 0 && decisions["runs", default: 0] > 0 && decisions["may-run", default: 0] > 0,
                "\(decisions)")
    }

    /// Tasks whose conditions, `when`, service or fan-out decide at run time: the dry run says so.
    @Test func tasksDecidedAtTheirStartSayWhy() async throws {
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              server:
                run: python3 -m http.server 8765
                service: {ready: {reachable: "127.0.0.1:8765"}, timeout: 10s}
              deploy:
                needs: [server]
                conditions: [{env: TOKEN}]
                run: ./deploy
              photo:
                foreach: {from: photos.json}
                run: echo {{ item }}
              cleanup:
                needs: [deploy]
                when: always
                run: echo cleanup
              alarm:
                needs: [deploy]
                when: failure
                run: echo alarm
            """)
        defer { folder.remove() }
        let dry = try await dryRun(in: folder)
        #expect(dry.mapValues(\.reason) == [
            "server": "it is a service (always runs)",
            "deploy": "may run: its conditions are checked when its needs are done",
            "photo[*]": "may run: its items are read at run time",
            "cleanup": "may run: once its needs are done, whatever they did",
            "alarm": "may run: only if a need fails",
        ])
        // What only a failure starts has no step in the plan, and says why it may run.
        let plan = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run"], in: folder.directory)
        let alarmRow = plan.outputLines.last?.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        #expect(alarmRow == "- alarm default normal default deploy run; when failure may run: only if a need fails", "\(plan.outputLines)")
        let alarm = try await JobGraphBinary.run(["explain", "p.yaml", "alarm"], in: folder.directory)
        #expect(alarm.outputLines == [
            "alarm: may run: only if a need fails",
            "  deploy: may run: its conditions are checked when its needs are done",
            "    server: runs because it is a service (always runs)",
        ])
    }

    @Test func aTaskThatFailedAfterASuccessDidNotSucceedLastTime() async throws {
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              relapse:
                run: test ! -f broken && echo ok > relapse.out
                outputs: [relapse.out]
            """)
        defer { folder.remove() }
        #expect(try await folder.run().status == 0)
        #expect(try await dryRun(in: folder)["relapse"]?.reason == "up-to-date")
        try folder.write("", to: "broken")
        try folder.rewrite("""
            version: 1
            tasks:
              relapse:
                run: test ! -f broken && echo ok > relapse.out
                outputs: [relapse.out]
                env: {AGAIN: "1"}
            """)
        let failed = try await folder.run()
        #expect(failed.finalStates["relapse"] == "failed")
        #expect(try await dryRun(in: folder)["relapse"]?.reason == "did not succeed last time")
    }

    @Test func explainWalksTheNeedsDepthFirstEachOnce() async throws {
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              base:
                run: echo base > base.txt
                outputs: [base.txt]
              left:
                needs: [base]
                run: cat base.txt > left.txt
                inputs: [base.txt]
                outputs: [left.txt]
              right:
                needs: [base]
                run: echo right
              top:
                needs: [left, right]
                run: cat left.txt > top.txt
                inputs: [left.txt]
                outputs: [top.txt]
              elsewhere:
                run: echo elsewhere
            """)
        defer { folder.remove() }
        #expect(try await folder.run().status == 0)
        let explained = try await JobGraphBinary.run(["explain", "p.yaml", "top"], in: folder.directory)
        #expect(explained.status == 0)
        #expect(explained.outputLines == [
            "top: may run: it needs 'right', which will run",
            "  left: up-to-date",
            "    base: up-to-date",
            "  right: runs because no inputs or outputs declared (always runs)",
        ])
        let unknown = try await JobGraphBinary.run(["explain", "p.yaml", "tpo"], in: folder.directory)
        #expect(unknown.status == 2)
        #expect(unknown.standardError.contains("'top'"), "\(unknown.standardError)")
    }

    /// A dry run reads the state without taking the run lock or writing a byte: it works while a run holds
    /// the lock, and leaves `.jobgraph/` as it found it.
    @Test func theDryRunNeitherLocksNorWrites() async throws {
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              made:
                run: echo made > made.txt
                outputs: [made.txt]
              hold:
                run: while [ ! -f release ]; do sleep 0.05; done
            """)
        defer { folder.remove() }
        #expect(try await folder.run(["made"]).status == 0)
        let state = folder.directory.file(".jobgraph")
        let snapshot = try Self.snapshot(of: state)

        let dry = try await dryRun(in: folder)
        #expect(dry["made"]?.reason == "up-to-date")
        #expect(try Self.snapshot(of: state) == snapshot)

        let events = folder.nextEventsFile()
        let holder = try JobGraphBinary.start(["run", "p.yaml", "hold", "--events", events], in: folder.directory)
        #expect(await holder.waitForTransitions(to: "executing", in: events))
        let whileLocked = try await dryRun(in: folder)
        #expect(whileLocked["made"]?.reason == "up-to-date")
        try folder.write("", to: "release")
        #expect(try await holder.finish().status == 0)
    }

    @Test func jsonAppliesOnlyToADryRun() async throws {
        let folder = try PipelineFolder("version: 1\ntasks:\n  a:\n    run: echo a > a.txt\n")
        defer { folder.remove() }
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--json"], in: folder.directory)
        #expect(outcome.status == 2)
        #expect(outcome.standardError.contains("'--json' applies only with '--dry-run'"), "\(outcome.standardError)")
        #expect(folder.directory.read("a.txt") == nil)
    }

    // MARK: - Helpers

    /// `run p.yaml --dry-run --json`, as each task's decision and reason.
    func dryRun(in folder: PipelineFolder, _ extra: [String] = []) async throws -> [String: (decision: String, reason: String)] {
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run", "--json"] + extra, in: folder.directory)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let document = try JSONSerialization.jsonObject(with: Data(outcome.standardOutput.utf8)) as? [String: Any]
        let tasks = document?["tasks"] as? [[String: Any]] ?? []
        var result: [String: (decision: String, reason: String)] = [:]
        for task in tasks {
            guard let id = task["task"] as? String else { continue }
            result[id] = (task["decision"] as? String ?? "", task["reason"] as? String ?? "")
        }
        return result
    }

    /// Each task's reason on its start (`ready -> executing`), or on its move to `up-to-date` if that came first.
    static func startReasons(in events: [[String: Any]]) -> [String: String] {
        var reasons: [String: String] = [:]
        for event in events {
            guard let task = event["task"] as? String, let reason = event["reason"] as? String else { continue }
            let to = event["to"] as? String
            if reasons[task] == nil, to == "up-to-date" || (to == "executing" && event["from"] as? String == "ready") {
                reasons[task] = reason
            }
        }
        return reasons
    }

    /// Every file under `directory` with its bytes, but SQLite's `-shm` index and an empty `-wal`: a reader
    /// of a WAL database that finds neither creates them (empty) and marks its snapshot in the index, which
    /// holds none of the data.
    static func snapshot(of directory: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.subpathsOfDirectory(atPath: directory) where !name.hasSuffix("-shm") {
            let path = directory + "/" + name
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                  let bytes = FileManager.default.contents(atPath: path), !(name.hasSuffix("-wal") && bytes.isEmpty) else { continue }
            files[name] = bytes
        }
        return files
    }
}

/// A deterministic pseudo-random source (SplitMix64), so a failing state can be reproduced from its seed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A pipeline of tasks `t00` … each reading its own source and its needs' outputs, and writing one file;
/// edits change sources, delete outputs, or change a command or a variable in the file.
struct RandomPipeline {
    let taskCount: Int
    /// Each task's needs, all earlier tasks.
    var needs: [[Int]]
    /// Per task, a version number written into its command; bumped by an edit.
    var commandVersions: [Int]
    /// Per task, its `VALUE` variable; changed by an edit.
    var values: [Int]

    init(taskCount: Int, random: inout SplitMix64) {
        self.taskCount = taskCount
        needs = (0..<taskCount).map { task in
            guard task > 0 else { return [] }
            let count = Int.random(in: 0...2, using: &random)
            return Array(Set((0..<count).map { _ in Int.random(in: 0..<task, using: &random) })).sorted()
        }
        commandVersions = Array(repeating: 0, count: taskCount)
        values = Array(repeating: 0, count: taskCount)
    }

    func name(_ task: Int) -> String { task < 10 ? "t0\(task)" : "t\(task)" }
    func source(_ task: Int) -> String { "src/\(name(task)).txt" }
    func output(_ task: Int) -> String { "out/\(name(task)).txt" }

    func yaml() -> String {
        var text = "version: 1\ntasks:\n"
        for task in 0..<taskCount {
            let inputs = [source(task)] + needs[task].map(output)
            // A new version changes the command, not what it writes: the task reruns, its readers need not.
            text += """
                  \(name(task)):
                    run: 'mkdir -p out && cat \(inputs.joined(separator: " ")) > \(output(task)) && echo "$VALUE" >> \(output(task)) && true v\(commandVersions[task])'
                    env: {VALUE: "\(values[task])"}
                    inputs: [\(inputs.joined(separator: ", "))]
                    outputs: [\(output(task))]

                """
            if !needs[task].isEmpty { text += "    needs: [\(needs[task].map(name).joined(separator: ", "))]\n" }
        }
        return text
    }

    /// One to three random edits, as a user between two runs.
    mutating func edit(_ folder: PipelineFolder, random: inout SplitMix64, round: Int) throws {
        var rewrites = false
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            let task = Int.random(in: 0..<taskCount, using: &random)
            switch Int.random(in: 0..<5, using: &random) {
            case 0: try folder.write("source \(task) edited in round \(round)\n", to: source(task))
            case 1: try? folder.delete(output(task))  // already gone in an earlier edit of this round
            case 2:
                commandVersions[task] += 1
                rewrites = true
            case 3:
                values[task] += 1
                rewrites = true
            default: try folder.write("source \(task)\n", to: source(task))  // often the same content again
            }
        }
        if rewrites { try folder.rewrite(yaml()) }
    }
}
