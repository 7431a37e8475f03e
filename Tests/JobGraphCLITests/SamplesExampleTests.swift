import Foundation
import JobGraphTestSupport
import Testing

/// `examples/samples.yaml` runs as its comment says: each sample through its own chain, the report
/// waiting for every sample because of the files it reads, every task known before the run, each holding
/// the resources it declares.
@Suite(.hangLimit(minutes: 1))
struct SamplesExampleTests {
    private func copyOfTheExample() throws -> ScratchDirectory {
        let directory = try ScratchDirectory("jobgraph-example")
        let examples = Fixtures.repositoryRoot.appendingPathComponent("examples")
        try FileManager.default.createDirectory(atPath: directory.path + "/samples", withIntermediateDirectories: true)
        try directory.write(String(contentsOf: examples.appendingPathComponent("samples.yaml"), encoding: .utf8), to: "samples.yaml")
        for name in ["list", "alpha", "beta", "gamma"] {
            try directory.write(String(contentsOf: examples.appendingPathComponent("samples/\(name).txt"), encoding: .utf8), to: "samples/\(name).txt")
        }
        return directory
    }

    @Test func eachSampleRunsItsOwnChainAndTheReportReadsThemAll() async throws {
        let directory = try copyOfTheExample()
        defer { directory.remove() }
        let plan = try await JobGraphBinary.run(["run", "samples.yaml", "--dry-run", "--json", "--jobs", "2"], in: directory)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(plan.standardOutput.utf8)) as? [String: Any])
        let tasks = try #require(document["tasks"] as? [[String: Any]])
        var needs: [String: [String]] = [:]
        var inferred: [String: [String]] = [:]
        for task in tasks {
            needs[task["task"] as? String ?? ""] = task["needs"] as? [String]
            inferred[task["task"] as? String ?? ""] = task["inferred_needs"] as? [String]
        }
        #expect(needs["count[1]"] == ["split[1]"])
        #expect(inferred["report"] == ["count[0]", "count[1]", "count[2]"])
        #expect(document["resources"] as? [String: Int] == ["mem": 256 << 20])
        #expect(tasks.first { $0["task"] as? String == "split[0]" }?["resources"] as? [String: Int] == ["cpus": 2, "mem": 64 << 20])

        let outcome = try await JobGraphBinary.run(["run", "samples.yaml", "--jobs", "2"], in: directory)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(directory.read("build/samples/report.txt") == "alpha: the 3\nbeta: a 3\ngamma: gamma 2\n")
        #expect(outcome.outputLines.contains { $0.hasPrefix("7 succeeded in ") }, "\(outcome.outputLines)")
        let again = try await JobGraphBinary.run(["run", "samples.yaml", "--jobs", "2"], in: directory)
        #expect(again.outputLines.contains { $0.hasPrefix("7 up-to-date in ") }, "\(again.outputLines)")
    }
}
