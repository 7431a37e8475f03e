import Foundation
import JobGraphTestSupport
import Testing

/// Per-item chains (docs/pipeline.md, "Per-item chains"): in a fan-out, a need may name the item, so
/// each item waits for its own. Before, `sort[S1]` waited for every `map` item and one failed sample
/// skipped the whole next step.
@Suite(.hangLimit(minutes: 1))
struct PerItemNeedsTests {
    /// Three samples read from a list no task writes; `S2` fails to map.
    static let chain = """
        version: 1
        tasks:
          map:
            foreach: {from: samples.txt}
            run: "test {{ item }} != S2 && echo mapped > {{ item }}.sam"
            outputs: ["{{ item }}.sam"]
          sort:
            foreach: {from: samples.txt}
            needs: ["map[{{ index }}]"]
            run: "cp {{ item }}.sam {{ item }}.bam"
            outputs: ["{{ item }}.bam"]
          index:
            foreach: [S1, S2, S3]
            needs: ["sort[{{ index }}]"]
            run: "echo indexed > {{ item }}.bai"
        """

    private func folder(_ yaml: String) throws -> ScratchDirectory {
        let directory = try ScratchDirectory("jobgraph-item-needs")
        try directory.write(yaml, to: "p.yaml")
        try directory.write("S1\nS2\nS3\n", to: "samples.txt")
        return directory
    }

    @Test func aFailedSampleSkipsOnlyItsOwnChainUnderKeepGoing() async throws {
        let directory = try folder(Self.chain)
        defer { directory.remove() }
        let running = try JobGraphBinary.start(["run", "p.yaml", "--keep-going", "--events", "e.jsonl"], in: directory)
        let outcome = try await running.finish()
        #expect(outcome.status == 1)
        let states = RunResult.finalStates(in: running.events(in: "e.jsonl"))
        #expect(states == [
            "map[0]": "succeeded", "map[1]": "failed", "map[2]": "succeeded",
            "sort[0]": "succeeded", "sort[1]": "skipped", "sort[2]": "succeeded",
            "index[S1]": "succeeded", "index[S2]": "skipped", "index[S3]": "succeeded",
        ])
        #expect(directory.read("S3.bai") == "indexed\n")
    }

    @Test func eachItemStartsOnceItsOwnNeedIsDoneNotEveryItemOfTheStepBefore() async throws {
        // `map[0]` ends at once; `map[1]` waits for a file that only `sort[0]` can make.
        let directory = try folder("""
            version: 1
            tasks:
              map:
                foreach: {from: samples.txt}
                run: "if [ {{ index }} = 1 ]; then while [ ! -e S1.bam ]; do sleep 0.01; done; fi; touch {{ item }}.sam"
              sort:
                foreach: {from: samples.txt}
                needs: ["map[{{ index }}]"]
                run: "cp {{ item }}.sam {{ item }}.bam"
            """)
        defer { directory.remove() }
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--jobs", "3"], in: directory)
        #expect(outcome.status == 0, "a barrier would deadlock here: \(outcome.standardError)")
        #expect(directory.read("S3.bam") != nil)
    }

    @Test func aSamplesChainRunsToItsIndexBeforeTheLastSampleIsMapped() async throws {
        // Without history every `map` has the longest remaining path; ranked by it alone, every `map` went
        // before any `sort` (docs/pipeline.md, "Order of ready tasks"). With far more work left than the
        // 2 slots take at once, no path is urgent, and the ready task furthest along its chain goes first.
        let directory = try ScratchDirectory("jobgraph-item-order")
        defer { directory.remove() }
        try directory.write((1...8).map { "S\($0)" }.joined(separator: "\n") + "\n", to: "samples.txt")
        try directory.write("""
            version: 1
            tasks:
              map: {foreach: {from: samples.txt}, run: "true"}
              sort: {foreach: {from: samples.txt}, needs: ["map[{{ index }}]"], run: "true"}
              index: {foreach: {from: samples.txt}, needs: ["sort[{{ index }}]"], run: "true"}
              call: {needs: [index], run: "true"}
            """, to: "p.yaml")
        let running = try JobGraphBinary.start(["run", "p.yaml", "--jobs", "2", "--events", "e.jsonl"], in: directory)
        let outcome = try await running.finish()
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let order = running.events(in: "e.jsonl").filter { $0["to"] as? String == "executing" }.compactMap { $0["task"] as? String }
        let firstIndex = try #require(order.firstIndex { $0.hasPrefix("index[") })
        let lastMap = try #require(order.lastIndex { $0.hasPrefix("map[") })
        #expect(firstIndex < lastMap, "\(order)")
        #expect(order.last == "call")
    }

    @Test func theDryRunShowsTheItemsOfAListNoTaskWritesAndTheirOwnNeeds() async throws {
        let directory = try folder(Self.chain)
        defer { directory.remove() }
        let plan = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run", "--json"], in: directory)
        #expect(plan.status == 0, "\(plan.standardError)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(plan.standardOutput.utf8)) as? [String: Any])
        let tasks = try #require(document["tasks"] as? [[String: Any]])
        var needs: [String: [String]] = [:]
        for task in tasks { needs[task["task"] as? String ?? ""] = task["needs"] as? [String] }
        #expect(needs["sort[1]"] == ["map[1]"])
        #expect(needs["index[S3]"] == ["sort[2]"])
        #expect(needs.count == 9, "\(needs.keys.sorted())")
    }

    @Test func aListATaskWritesIsReadAtRunTimeAndItsWriterIsANeed() async throws {
        let directory = try folder("""
            version: 1
            tasks:
              list: {run: "printf 'a\\\\nb\\\\n' > items.txt", outputs: [items.txt]}
              each: {foreach: {from: items.txt}, run: "touch {{ item }}.done"}
            """)
        defer { directory.remove() }
        let plan = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run"], in: directory)
        #expect(plan.standardOutput.contains("each[*]"), "\(plan.standardOutput)")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml"], in: directory)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(directory.read("a.done") != nil && directory.read("b.done") != nil)
    }

    @Test(arguments: [
        ("  x: {foreach: [a], needs: [\"map[{{ item }}]\"], run: \"true\"}", "p.yaml:LINE:29: error: item 'x[a]' needs unknown task 'map[a]' (from 'map[{{ item }}]')"),
        ("  x: {needs: [\"map[{{ item }}]\"], run: \"true\"}", "p.yaml:LINE:15: error: only a task with 'foreach' can have a need that names its item"),
        ("  x: {foreach: [a], needs: [\"mop[{{ item }}]\"], run: \"true\"}", "p.yaml:LINE:29: error: unknown task 'mop' in 'needs'; did you mean 'map'?"),
        ("  x: {foreach: [a], needs: [\"map[{{ stage }}]\"], run: \"true\"}\nvars: {stage: one}", "p.yaml:LINE:29: error: a need may name only the fan-out's item"),
        ("  x: {foreach: [a, b], needs: [\"x[{{ item }}]\"], run: \"true\"}", "p.yaml:LINE:32: error: item 'x[a]' needs itself through 'x[{{ item }}]'"),
    ])
    func aWrongPerItemNeedIsAnErrorAtItsPlace(task: String, message: String) async throws {
        let directory = try folder(Self.chain + "\n" + task + "\n")
        defer { directory.remove() }
        let lines = (directory.read("p.yaml") ?? "").split(separator: "\n", omittingEmptySubsequences: false)
        let line = try #require(lines.firstIndex { $0.hasPrefix("  x:") }) + 1
        let outcome = try await JobGraphBinary.run(["validate", "p.yaml"], in: directory)
        #expect(outcome.status == 2)
        #expect(outcome.standardError.contains(message.replacingOccurrences(of: "LINE", with: String(line))), "\(outcome.standardError)")
    }

    // MARK: - Lists read at run time

    /// `list` writes the samples, so both fan-outs read them at run time; `fixed` lists its items in the
    /// file but names `sort`'s.
    static let runTimeChain = #"""
        version: 1
        tasks:
          list: {run: "printf 'S1\\nS2\\nS3\\n' > samples.txt", outputs: [samples.txt]}
          map:
            foreach: {from: samples.txt}
            run: "test {{ item }} != S2 && echo mapped > {{ item }}.sam"
          sort:
            foreach: {from: samples.txt}
            needs: ["map[{{ index }}]"]
            run: "cp {{ item }}.sam {{ item }}.bam"
          index:
            foreach: {from: samples.txt}
            needs: ["sort[{{ index }}]"]
            run: "cp {{ item }}.bam {{ item }}.bai"
          fixed:
            foreach: [S1, S2, S3]
            needs: ["sort[{{ index }}]"]
            run: "cp {{ item }}.bam {{ item }}.fixed"
        """#

    @Test func aChainOfListsReadAtRunTimeSkipsOnlyTheFailedSamplesChainUnderKeepGoing() async throws {
        let directory = try ScratchDirectory("jobgraph-item-needs")
        defer { directory.remove() }
        try directory.write(Self.runTimeChain, to: "p.yaml")
        let plan = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run"], in: directory)
        #expect(plan.status == 0, "\(plan.standardError)")
        #expect(plan.standardOutput.contains("sort[*]"), "\(plan.standardOutput)")
        let running = try JobGraphBinary.start(["run", "p.yaml", "--keep-going", "--events", "e.jsonl"], in: directory)
        let outcome = try await running.finish()
        #expect(outcome.status == 1, "\(outcome.standardError)")
        let events = running.events(in: "e.jsonl")
        let states = RunResult.finalStates(in: events)
        #expect(states == [
            "list": "succeeded", "map": "failed", "sort": "succeeded", "index": "succeeded",
            "map[0]": "succeeded", "map[1]": "failed", "map[2]": "succeeded",
            "sort[0]": "succeeded", "sort[1]": "skipped", "sort[2]": "succeeded",
            "index[0]": "succeeded", "index[1]": "skipped", "index[2]": "succeeded",
            "fixed[S1]": "succeeded", "fixed[S2]": "skipped", "fixed[S3]": "succeeded",
        ])
        #expect(directory.read("S3.bai") == "mapped\n" && directory.read("S1.fixed") == "mapped\n")
        // `sort` reads its list once `map` has read its own, not once every `map` item has ended.
        let sortRead = try #require(events.firstIndex { $0["task"] as? String == "sort" && $0["to"] as? String == "executing" })
        let mapEnded = try #require(events.firstIndex { $0["task"] as? String == "map" && $0["to"] as? String == "failed" })
        #expect(sortRead < mapEnded)
    }

    @Test func anItemAddedAfterItsNeedEndedCountsHowItEnded() async throws {
        // `sort` reads its list once `wait` is done: by then every `map` item has ended, one of them failed.
        let (outcome, events) = try await runKeepingGoing(#"""
            version: 1
            tasks:
              list: {run: "printf 'S1\nS2\n' > samples.txt", outputs: [samples.txt]}
              map: {foreach: {from: samples.txt}, run: "test {{ item }} = S1"}
              wait: {needs: [map], when: always, run: "true"}
              sort: {foreach: {from: samples.txt}, needs: [wait, "map[{{ index }}]"], run: "true"}
            """#)
        #expect(outcome.status == 1)
        let states = RunResult.finalStates(in: events)
        #expect(states["wait"] == "succeeded")
        #expect(states["sort[0]"] == "succeeded")
        #expect(states["sort[1]"] == "skipped")
    }

    @Test func aNeedThatNamesNoItemAtRunTimeFailsThatItemOnlyWithItsPlace() async throws {
        // `sort` lists four samples, `map` three: `sort[3]` names `map[3]`, which is not there.
        let yaml = #"""
            version: 1
            tasks:
              list: {run: "printf 'S1\nS2\nS3\n' > samples.txt; printf 'S1\nS2\nS3\nS4\n' > more.txt", outputs: [samples.txt, more.txt]}
              map: {foreach: {from: samples.txt}, run: "true"}
              sort: {foreach: {from: more.txt}, needs: ["map[{{ index }}]"], run: "true"}
            """#
        let lines = yaml.split(separator: "\n")
        let line = try #require(lines.firstIndex { $0.hasPrefix("  sort:") })
        let column = try #require(lines[line].range(of: "\"map[")).lowerBound.utf16Offset(in: lines[line]) + 1
        let (outcome, events) = try await runKeepingGoing(yaml)
        #expect(outcome.status == 1)
        let states = RunResult.finalStates(in: events)
        #expect(states["sort[0]"] == "succeeded" && states["sort[2]"] == "succeeded")
        #expect(states["sort[3]"] == "failed")
        let error = events.last { $0["task"] as? String == "sort[3]" }?["error"] as? String
        #expect(error == "p.yaml:\(line + 1):\(column): item 'sort[3]' needs 'map[3]' (from 'map[{{ index }}]'): 'map' has 3 items, numbered from 0",
                "\(String(describing: error))")
        #expect(outcome.standardOutput.contains("sort[3]"), "\(outcome.standardOutput)")
    }

    @Test func anItemThatNamesATaskWaitingForItsOwnFanOutFailsRatherThanWaitingForItself() async throws {
        // `sort[0]` names `after`, which needs the whole of `sort`: it would wait for itself.
        let (outcome, events) = try await runKeepingGoing(#"""
            version: 1
            tasks:
              list: {run: "printf 'after\\nlist\\n' > names.txt", outputs: [names.txt]}
              sort: {foreach: {from: names.txt}, needs: ["{{ item }}"], run: "true"}
              after: {needs: [sort], when: always, run: "true"}
            """#)
        #expect(outcome.status == 1)
        let states = RunResult.finalStates(in: events)
        #expect(states["sort[0]"] == "failed" && states["sort[1]"] == "succeeded" && states["after"] == "succeeded", "\(states)")
        let error = events.last { $0["task"] as? String == "sort[0]" }?["error"] as? String ?? ""
        #expect(error.hasSuffix("item 'sort[0]' needs 'after' (from '{{ item }}'), which waits for 'sort' itself"), "\(error)")
    }

    /// Runs the pipeline `yaml` under `--keep-going` with an events file: how it ended, and its events.
    private func runKeepingGoing(_ yaml: String) async throws -> (JobGraphBinary.Outcome, [[String: Any]]) {
        let directory = try ScratchDirectory("jobgraph-item-needs")
        defer { directory.remove() }
        try directory.write(yaml, to: "p.yaml")
        let running = try JobGraphBinary.start(["run", "p.yaml", "--keep-going", "--events", "e.jsonl"], in: directory)
        let outcome = try await running.finish()
        return (outcome, running.events(in: "e.jsonl"))
    }

    @Test func perItemNeedsOnListsReadAtRunTimeAreValid() async throws {
        let directory = try ScratchDirectory("jobgraph-item-needs")
        defer { directory.remove() }
        try directory.write(Self.runTimeChain, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["validate", "p.yaml"], in: directory)
        #expect(outcome.status == 0, "\(outcome.standardError)")
    }
}
