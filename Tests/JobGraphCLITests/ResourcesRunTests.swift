import Foundation
import JobGraphTestSupport
import Testing

/// Resources through the binary (docs/pipeline.md, "Resources"): what a task asks is held while it
/// executes, a big task is not starved by small ones, a task asking too much stops the run before
/// anything starts, and shell tasks learn their `cpus`.
@Suite(.hangLimit(minutes: 2))
struct ResourcesRunTests {
    /// The most of `name` held at once, each attempt holding what its transition into `executing` says
    /// (`resources`, docs/events.md) until it leaves `executing`.
    static func mostHeld(_ name: String, in events: [[String: Any]]) -> Int {
        var held: [String: Int] = [:]
        var total = 0, most = 0
        for event in events where event["event"] as? String == "transition" {
            guard let task = event["task"] as? String else { continue }
            if event["from"] as? String == "executing", let amount = held.removeValue(forKey: task) { total -= amount }
            if event["to"] as? String == "executing", let amount = (event["resources"] as? [String: Any])?[name] as? Int {
                held[task] = amount
                total += amount
            }
            most = max(most, total)
        }
        return most
    }

    @Test func aRetryHoldsWhatRetryScaleGivesItAndItsCommandsAndEventsSaySo() async throws {
        let folder = try PipelineFolder("""
            version: 1
            resources: {mem: 4G}
            tasks:
              align:
                run: 'echo "$JOBGRAPH_ATTEMPT $JOBGRAPH_CPUS" >> tries.txt; [ "$JOBGRAPH_ATTEMPT" = 3 ]'
                retries: 2
                retry_delay: 0
                retry_scale: {mem: 2, cpus: 2}
                resources: {mem: 1G}
            """, prefix: "jobgraph-resources-retry")
        defer { folder.remove() }
        let run = try await folder.run(["--jobs", "2"])
        #expect(run.status == 0, "\(run.outcome.standardError)")
        // The third attempt asks 4 CPUs, more than `--jobs` 2: it holds (and is told) 2.
        #expect(folder.directory.read("tries.txt") == "1 1\n2 2\n3 2\n")
        _ = await EventSchemaTests.validate(["events-1.jsonl"], in: folder.directory)
        let starts = run.events.filter { $0["task"] as? String == "align" && $0["to"] as? String == "executing" }
        #expect(starts.map { $0["resources"] as? [String: Int] } == [
            ["cpus": 1, "mem": 1 << 30], ["cpus": 2, "mem": 2 << 30], ["cpus": 2, "mem": 4 << 30],
        ], "\(starts)")
        #expect(starts.map { $0["resources_note"] as? String } == [nil, nil, "asks cpus 4, more than the 2 total: holds 2"])
        let started = try #require(run.events.first)
        #expect(started["resources"] as? [String: Int] == ["cpus": 2, "mem": 4 << 30])
        #expect(run.outcome.outputLines.contains { $0.hasSuffix("align  failed -> executing  (attempt 3, asks cpus 4, more than the 2 total: holds 2)") },
                "\(run.outcome.outputLines)")
    }

    @Test func aScaledRetryWaitsForRoomAndTheMemoryTotalIsNeverExceeded() async throws {
        // `grow` fails while three others hold 3G of the 4G; its retry asks 3G, which it gets only once two
        // of them have ended, and none of the items still ready may take it meanwhile.
        let folder = try PipelineFolder("""
            version: 1
            resources: {mem: 4G}
            tasks:
              grow: {run: '[ "$JOBGRAPH_ATTEMPT" = 2 ] || exit 1', priority: high, retries: 1, retry_delay: 0,
                     retry_scale: {mem: 3}, resources: {mem: 1G}}
              other: {foreach: [a, b, c, d, e, f], run: "sleep 0.2", resources: {mem: 1G}}
            """, prefix: "jobgraph-resources-retry-room")
        defer { folder.remove() }
        let run = try await folder.run(["--jobs", "4"])
        #expect(run.status == 0, "\(run.outcome.standardError)")
        #expect(run.finalStates.filter { $0.key.hasPrefix("other[") }.count == 6, "\(run.finalStates)")
        #expect(run.finalStates.values.allSatisfy { $0 == "succeeded" }, "\(run.finalStates)")
        #expect(Self.mostHeld("mem", in: run.events) <= 4 << 30)
        #expect(Self.mostHeld("cpus", in: run.events) <= 4)
        let retry = try #require(run.events.first { $0["task"] as? String == "grow" && $0["from"] as? String == "failed" })
        #expect(retry["resources"] as? [String: Int] == ["cpus": 1, "mem": 3 << 30])
    }

    @Test func tasksShareTheMemoryTotalAndNeverExceedIt() async throws {
        let directory = try ScratchDirectory("jobgraph-resources-mem")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            resources: {mem: 3G}
            tasks:
              heavy: {foreach: [a, b, c], run: "true", resources: {mem: 2G}}
              light: {foreach: [d, e], run: "true", resources: {mem: 1G}}
            """, to: "p.yaml")
        let running = try JobGraphBinary.start(["run", "p.yaml", "--jobs", "4", "--events", "e.jsonl"], in: directory)
        let outcome = try await running.finish()
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let events = running.events(in: "e.jsonl")
        #expect(Self.mostHeld("mem", in: events) <= 3 << 30)
        #expect(Self.mostHeld("mem", in: events) >= 2 << 30, "the events say what each task held")
        #expect(RunResult.finalStates(in: events).values.filter { $0 == "succeeded" }.count == 5)
    }

    @Test func aBigTaskStartsBeforeAStreamOfSmallOnesIsExhausted() async throws {
        // Two slots. `big` (cpus 2, high priority) is ready once `first` ends; 40 small tasks could always
        // take the one slot left free, but once `big` is the best ready task nothing passes it.
        let directory = try ScratchDirectory("jobgraph-resources-starve")
        defer { directory.remove() }
        let smalls = (1...40).map { "s\($0)" }.joined(separator: ", ")
        try directory.write("""
            version: 1
            tasks:
              first: {run: "true"}
              big: {needs: [first], priority: high, run: "true", resources: {cpus: 2}}
              small: {foreach: [\(smalls)], run: "true"}
            """, to: "p.yaml")
        let running = try JobGraphBinary.start(["run", "p.yaml", "--jobs", "2", "--events", "e.jsonl"], in: directory)
        let outcome = try await running.finish()
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let events = running.events(in: "e.jsonl")
        let started = events.filter { $0["to"] as? String == "executing" }.compactMap { $0["task"] as? String }
        let bigAt = try #require(started.firstIndex(of: "big"))
        let smallsAfter = started[bigAt...].filter { $0.hasPrefix("small[") }.count
        #expect(smallsAfter >= 30, "\(started)")
        #expect(Self.mostHeld("cpus", in: events) <= 2)
    }

    @Test func aTaskAskingMoreThanATotalStopsTheRunBeforeAnythingStarts() async throws {
        let directory = try ScratchDirectory("jobgraph-resources-excess")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            resources: {gpus: 1}
            tasks:
              early: {run: "touch ran"}
              wide: {needs: [early], run: "true", resources: {cpus: 4, gpus: 2, mem: 2G}}
            """, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--jobs", "2", "--resources", "mem=1G"], in: directory)
        #expect(outcome.status == 2)
        #expect(outcome.standardError.split(separator: "\n").map(String.init) == [
            "p.yaml:5:57: error: task 'wide' asks for cpus 4, more than the total: '--jobs' 2",
            "p.yaml:5:66: error: task 'wide' asks for gpus 2, more than the total: the top-level 'resources' (gpus: 1)",
            "p.yaml:5:74: error: task 'wide' asks for mem 2G, more than the total: '--resources mem=1G'",
        ])
        #expect(directory.read("ran") == nil)
        let dryRun = try await JobGraphBinary.run(["run", "p.yaml", "--jobs", "4", "--resources", "gpus=2,mem=4G", "--dry-run"], in: directory)
        #expect(dryRun.status == 0, "\(dryRun.standardError)")

        // `validate` refuses what the file's totals cannot give; `cpus` against `--jobs` is the run's to check.
        let validated = try await JobGraphBinary.run(["validate", "p.yaml"], in: directory)
        #expect(validated.status == 2)
        #expect(validated.standardError == "p.yaml:5:66: error: task 'wide' asks for gpus 2, more than the total: the top-level 'resources' (gpus: 1)\n")

        let bad = try await JobGraphBinary.run(["run", "p.yaml", "--resources", "mem=lots"], in: directory)
        #expect(bad.status == 2)
        #expect(bad.standardError.contains("invalid amount 'lots' for 'mem' in '--resources'"), "\(bad.standardError)")
    }

    @Test func shellTasksGetTheCPUsTheyHold() async throws {
        let directory = try ScratchDirectory("jobgraph-resources-cpus")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              wide: {run: "echo $JOBGRAPH_CPUS > wide.txt", resources: {cpus: 2}}
              plain: {run: "echo $JOBGRAPH_CPUS > plain.txt"}
              pair: {parallel: ["echo $JOBGRAPH_CPUS > p1.txt", "echo $JOBGRAPH_CPUS > p2.txt"], resources: {cpus: 2}}
            """, to: "p.yaml")
        var environment = JobGraphBinary.environment
        environment["JOBGRAPH_CPUS"] = "7"  // a caller's own is not passed on
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--jobs", "4"], in: directory, environment: environment)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(directory.read("wide.txt") == "2\n")
        #expect(directory.read("plain.txt") == "1\n")
        #expect(directory.read("p1.txt") == "2\n" && directory.read("p2.txt") == "2\n")
    }

    @Test func theDryRunShowsResourcesLocallyAndAsSlurmOptions() async throws {
        let directory = try ScratchDirectory("jobgraph-resources-plan")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            resources: {mem: 16G, gpus: 2}
            tasks:
              train: {run: "true", resources: {cpus: 2, mem: 8G, gpus: 1}}
            """, to: "p.yaml")
        let local = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run", "--jobs", "2"], in: directory)
        #expect(local.status == 0, "\(local.standardError)")
        #expect(local.outputLines.first == "plan for p.yaml: 1 task on 1 queue, at most 2 at once; resources mem 16G, gpus 2")
        #expect(local.outputLines.contains { $0.contains("resources cpus 2, mem 8G, gpus 1") }, "\(local.outputLines)")

        let json = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run", "--json", "--jobs", "2"], in: directory)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        #expect(document["resources"] as? [String: Int] == ["mem": 16 << 30, "gpus": 2])
        let task = try #require((document["tasks"] as? [[String: Any]])?.first)
        #expect(task["resources"] as? [String: Int] == ["cpus": 2, "mem": 8 << 30, "gpus": 1])

        let slurm = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run", "--jobs", "2", "--executor", "slurm", "--slurm-mode", "jobs"], in: directory)
        #expect(slurm.outputLines.contains { $0.hasSuffix("--mem=8192M --gres=gpu:1 --cpus-per-task=2") }, "\(slurm.outputLines)")
    }
}
