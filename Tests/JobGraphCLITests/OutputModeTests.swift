import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `--output prefixed|grouped|interleaved` and `output:` in the file, through the binary, with four tasks
/// whose lines really interleave in time: each line waits until the line before it, of another task, is
/// in that task's log, which jobgraph writes before it passes the line on; so the order is fixed without
/// any clock.
@Suite(.hangLimit(minutes: 1))
struct OutputModeTests {
    private static let tasks = ["a", "b", "c", "d"]

    /// Task k prints `k1`, `k2`, `k3`; line n of a task waits for line n of the task before it (and `a`'s
    /// line n for `d`'s line n - 1), so the only possible order is a1 b1 c1 d1 a2 b2 … d3. `d` then fails.
    private static func pipeline(outputKey: String? = nil) -> String {
        var yaml = "version: 1\n"
        if let outputKey { yaml += "output: \(outputKey)\n" }
        yaml += "tasks:\n"
        for (index, task) in tasks.enumerated() {
            var script = ""
            for line in 1...3 {
                let previous = index == 0 ? (line == 1 ? nil : ("d", line - 1)) : (tasks[index - 1], line)
                if let (other, number) = previous {
                    script += "while ! grep -qx \(other)\(number) .jobgraph/logs/\(other).log 2>/dev/null; do sleep 0.01; done; "
                }
                script += "echo \(task)\(line); "
            }
            if task == "d" { script += "exit 1" }
            yaml += "  \(task): {run: \"\(script)\", allow_failure: \(task == "d")}\n"
        }
        return yaml
    }

    private static let expectedOrder = (1...3).flatMap { line in tasks.map { "\($0)\(line)" } }

    private static func run(_ extra: [String], outputKey: String? = nil) async throws -> (JobGraphBinary.Outcome, ScratchDirectory) {
        let directory = try ScratchDirectory("jobgraph-output")
        try directory.write(pipeline(outputKey: outputKey), to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "-j", "4", "--progress", "plain"] + extra, in: directory)
        return (outcome, directory)
    }

    @Test func groupedGivesEachTaskOneBlockUnderItsEndingLineFailedOneIncluded() async throws {
        let (outcome, directory) = try await Self.run(["--output", "grouped"])
        defer { directory.remove() }
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let lines = outcome.outputLines
        for task in Self.tasks {
            let header = try #require(lines.firstIndex { $0.contains("] \(task)  executing -> ") }, "\(lines)")
            #expect(Array(lines[(header + 1)...].prefix(3)) == ["\(task)1", "\(task)2", "\(task)3"], "\(lines)")
            let state = task == "d" ? "failed" : "succeeded"
            #expect(lines[header].contains("executing -> \(state)  ("), "\(lines[header])")
            #expect(lines.filter { $0.hasPrefix(task) && $0.count == 2 }.count == 3, "each line once")
        }
        #expect(lines[try #require(lines.firstIndex { $0.contains("] d  executing -> failed") })].contains("exit 1"))
        // The log keeps what the task printed, whatever the console showed.
        #expect(directory.read(".jobgraph/logs/d.log") == "d1\nd2\nd3\n")
    }

    @Test func prefixedAndInterleavedShowLinesAsTheyCome() async throws {
        let (prefixed, first) = try await Self.run([])
        defer { first.remove() }
        #expect(prefixed.outputLines.filter { $0.contains(" | ") } == Self.expectedOrder.map { "\($0.prefix(1)) | \($0)" })
        let (interleaved, second) = try await Self.run(["--output", "interleaved"])
        defer { second.remove() }
        #expect(interleaved.outputLines.filter { Self.expectedOrder.contains($0) } == Self.expectedOrder)
        #expect(!interleaved.outputLines.contains { $0.contains(" | ") })
    }

    @Test func theFileChoosesTheModeAndTheCommandLineOverridesIt() async throws {
        let (fromFile, first) = try await Self.run([], outputKey: "interleaved")
        defer { first.remove() }
        #expect(fromFile.outputLines.filter { Self.expectedOrder.contains($0) } == Self.expectedOrder)
        let (overridden, second) = try await Self.run(["--output", "prefixed"], outputKey: "interleaved")
        defer { second.remove() }
        #expect(overridden.outputLines.contains("a | a1"))
        #expect(!overridden.outputLines.contains("a1"))
    }

    @Test func groupedShowsARunningTasksOutputWhenCtrlCStopsIt() async throws {
        let directory = try ScratchDirectory("jobgraph-output")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              long: {run: "echo partial; echo more; exec sleep 300.641"}
            """, to: "p.yaml")
        let running = try JobGraphBinary.start(["run", "p.yaml", "--output", "grouped", "--progress", "plain"], in: directory)
        // Nothing of the task shows on the console until it ends; its log shows it is under way.
        #expect(await eventually { directory.read(".jobgraph/logs/long.log") == "partial\nmore\n" })
        #expect(await eventually { !ProcessTable.living(withArgument: "300.641").isEmpty })
        #expect(!running.standardOutput.contains("partial"))
        running.send(SIGINT)
        let outcome = try await running.finish()
        #expect(outcome.status == 130)
        let lines = outcome.outputLines
        let header = try #require(lines.firstIndex { $0.contains("] long  executing -> ") }, "\(lines)")
        #expect(Array(lines[(header + 1)...].prefix(2)) == ["partial", "more"], "\(lines)")
    }
}
