import Foundation
import JobGraphTestSupport
import Testing

/// The dry run sees a fan-out of pipeline inputs (docs/pipeline.md, "foreach"): a `from:` list that no
/// task writes is shown item by item by `--dry-run`, `--dry-run --json`, `graph` and `explain`, also when
/// its fan-out has needs; its items then wait for those needs. The run still reads it once they are done.
@Suite(.hangLimit(minutes: 1))
struct InputListPreviewTests {
    /// `map` needs `ref` and reads `samples.txt`, which no task declares it writes; `prep` appends a
    /// sample without declaring it, as only the run can see.
    static let pipeline = #"""
        version: 1
        tasks:
          ref: {run: "echo ref > ref.fa", outputs: [ref.fa]}
          prep: {run: "echo S3 >> samples.txt"}
          map:
            foreach: {from: samples.txt}
            needs: [ref, prep]
            run: "echo {{ item }} > {{ item }}.sam"
          sort:
            foreach: {from: samples.txt}
            needs: ["map[{{ index }}]"]
            run: "cp {{ item }}.sam {{ item }}.bam"
        """#

    private func folder() throws -> ScratchDirectory {
        let directory = try ScratchDirectory("jobgraph-input-list")
        try directory.write(Self.pipeline, to: "p.yaml")
        try directory.write("S1\nS2\n", to: "samples.txt")
        return directory
    }

    @Test func theDryRunShowsEachItemWaitingForTheFanOutsNeeds() async throws {
        let directory = try folder()
        defer { directory.remove() }
        let plan = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run"], in: directory)
        #expect(plan.status == 0, "\(plan.standardError)")
        let rows = plan.outputLines.map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        let needs = Dictionary(rows.filter { $0.count > 5 }.map { (String($0[1]), String($0[5])) }) { first, _ in first }
        #expect(needs["map[0]"] == "ref, prep" || needs["map[0]"] == "ref,", "\(plan.standardOutput)")
        #expect(needs["map[1]"] != nil && needs["sort[1]"] == "map[1]", "\(plan.standardOutput)")
        #expect(!plan.standardOutput.contains("[*]"), "\(plan.standardOutput)")
    }

    @Test func theJSONDryRunShowsEachItemWithItsNeeds() async throws {
        let directory = try folder()
        defer { directory.remove() }
        let plan = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run", "--json"], in: directory)
        #expect(plan.status == 0, "\(plan.standardError)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(plan.standardOutput.utf8)) as? [String: Any])
        var needs: [String: [String]] = [:]
        for task in try #require(document["tasks"] as? [[String: Any]]) { needs[task["task"] as? String ?? ""] = task["needs"] as? [String] }
        #expect(needs == [
            "ref": [], "prep": [], "map[0]": ["ref", "prep"], "map[1]": ["ref", "prep"], "sort[0]": ["map[0]"], "sort[1]": ["map[1]"],
        ])
    }

    @Test func graphDrawsEachItemAndItsEdges() async throws {
        let directory = try folder()
        defer { directory.remove() }
        let dot = try await JobGraphBinary.run(["graph", "p.yaml"], in: directory)
        #expect(dot.status == 0, "\(dot.standardError)")
        for edge in [#""ref" -> "map[0]""#, #""prep" -> "map[1]""#, #""map[1]" -> "sort[1]""#] {
            #expect(dot.standardOutput.contains(edge), "\(dot.standardOutput)")
        }
        #expect(!dot.standardOutput.contains(#""map[0]" -> "sort[1]""#))
        #expect(!dot.standardOutput.contains("dashed"), "no fan-out is left to its run: \(dot.standardOutput)")
    }

    @Test func explainFollowsAnItemToTheFanOutsNeeds() async throws {
        let directory = try folder()
        defer { directory.remove() }
        let explain = try await JobGraphBinary.run(["explain", "p.yaml", "sort[1]"], in: directory)
        #expect(explain.status == 0, "\(explain.standardError)")
        #expect(explain.outputLines.first == "sort[1]: may run: it needs 'map[1]', which may run", "\(explain.standardOutput)")
        #expect(explain.outputLines.contains("  map[1]: may run: it needs 'ref', which will run"), "\(explain.standardOutput)")
    }

    @Test func theRunReadsTheListOnceTheFanOutsNeedsAreDone() async throws {
        let directory = try folder()
        defer { directory.remove() }
        let outcome = try await JobGraphBinary.run(["run", "p.yaml"], in: directory)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        // `prep` added S3 before `map` read the list: the run has three samples where the dry run showed two.
        #expect(directory.read("S3.bam") == "S3\n")
    }

    @Test func aListATaskWritesIsStillShownAsAFanOutOfTheRun() async throws {
        let directory = try folder()
        defer { directory.remove() }
        try directory.write(Self.pipeline.replacingOccurrences(of: #"prep: {run: "echo S3 >> samples.txt"}"#,
                                                               with: #"prep: {run: "echo S3 >> samples.txt", outputs: [samples.txt]}"#), to: "p.yaml")
        let plan = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run"], in: directory)
        #expect(plan.status == 0, "\(plan.standardError)")
        #expect(plan.standardOutput.contains("map[*]") && plan.standardOutput.contains("sort[*]"), "\(plan.standardOutput)")
    }
}
