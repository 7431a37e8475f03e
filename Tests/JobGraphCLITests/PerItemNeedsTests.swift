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
        ("  x: {foreach: {from: later.txt}, needs: [\"map[{{ index }}]\", list], run: \"true\"}\n  list: {run: \"touch later.txt\"}",
         "p.yaml:LINE:43: error: task 'x' reads its items at run time, so its need 'map[{{ index }}]' cannot be given to each item"),
        ("  x: {foreach: [a, b], needs: [\"later[{{ index }}]\"], run: \"true\"}\n  later: {foreach: {from: later.txt}, needs: [list], run: \"true\"}\n  list: {run: \"touch later.txt\"}",
         "p.yaml:LINE:32: error: item 'x[a]' needs 'later[0]', an item of a fan-out whose items are read at run time"),
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
}
