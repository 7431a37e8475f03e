import Foundation
import JobGraphTestSupport
import Testing

/// `examples/advanced.yaml` runs as its comment says, with only coreutils and python3, writing only under
/// `build/`. It runs in a scratch copy, on a free port instead of 8765, so it never touches the repository,
/// and with the server's 10 s to get ready raised: on a loaded machine python3 took longer to start.
@Suite(.hangLimit(minutes: 1))
struct AdvancedExampleTests {
    @Test func theAdvancedExampleRunsAndLeavesNoProcessBehind() async throws {
        let directory = try ScratchDirectory("jobgraph-example")
        defer { directory.remove() }
        let example = Fixtures.repositoryRoot.appendingPathComponent("examples/advanced.yaml")
        let port = try LoopbackSocket.freePort()
        let text = try String(contentsOf: example, encoding: .utf8).replacingOccurrences(of: "8765", with: "\(port)")
            .replacingOccurrences(of: "      timeout: 10s\n", with: "      timeout: 300s\n")
        try #require(text.contains("      timeout: 300s\n"), "the server's readiness time limit moved")
        try directory.write(text, to: "advanced.yaml")
        let outcome = try await JobGraphBinary.run(["run", "advanced.yaml", "--jobs", "4", "--events", "events.jsonl"], in: directory)
        #expect(outcome.status == 0, "\(outcome.standardOutput)\(outcome.standardError)")
        #expect(directory.read("build/report.txt") == "pages: 3\nwords: 15\n")
        let lines = outcome.outputLines
        #expect(lines.contains("show-report | report in build/report.txt"))
        #expect(lines.contains("on_success | advanced: done"))
        #expect(lines.contains { $0.hasPrefix("10 succeeded, 1 skipped in ") }, "\(lines)")
        let entries = (try FileManager.default.contentsOfDirectory(atPath: directory.path)).filter { !$0.hasPrefix("jobgraph-") }
        #expect(Set(entries) == ["advanced.yaml", "build", ".jobgraph", "events.jsonl"])
        #expect(ProcessTable.living(withArgument: "\(port)").isEmpty)
    }
}
