import Foundation
import JobGraphTestSupport
import Testing

/// `jobgraph run` of real pipelines through the built binary: what it prints, writes and exits with
/// (contract: "Task states and the live view", "Exit codes and signals").
@Suite(.hangLimit(minutes: 1))
struct RunCommandTests {
    private static let states: Set<String> = ["pending", "waiting", "ready", "executing", "succeeded", "failed",
                                              "cancelled", "skipped", "up-to-date"]

    @Test func jsonProgressPrintsOneContractObjectPerTransition() async throws {
        let directory = try ScratchDirectory("jobgraph-cli")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            queues:
              tools: {max_concurrent: 1}
            tasks:
              hello: {queue: tools, run: "echo hello"}
              world: {needs: [hello], run: "echo world > world.txt"}
            """, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--progress", "json", "--events", "events.jsonl"], in: directory)
        #expect(outcome.status == 0)
        #expect(directory.read("world.txt") == "world\n")

        let objects = try outcome.outputLines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
        }
        let transitions = objects.filter { $0["event"] as? String == "transition" }
        #expect(transitions.count == 6)
        let dates = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        for object in transitions {
            #expect((object["time"] as? String).flatMap { try? dates.parse($0) } != nil, "\(object)")
            #expect(object["elapsed"] is Double || object["elapsed"] is Int, "\(object)")
            #expect((object["from"] as? String).map(Self.states.contains) == true, "\(object)")
            #expect((object["to"] as? String).map(Self.states.contains) == true, "\(object)")
            #expect(object["attempt"] as? Int == 1, "\(object)")
            #expect(object["queue"] as? String == (object["task"] as? String == "hello" ? "tools" : "default"), "\(object)")
            if object["to"] as? String == "succeeded" {
                #expect(object["exit_code"] as? Int == 0, "\(object)")
                #expect(object["duration"] is Double, "\(object)")
            }
        }
        #expect(transitions.map { "\($0["task"] ?? "") \($0["from"] ?? "")->\($0["to"] ?? "")" } == [
            "hello pending->ready", "hello ready->executing", "hello executing->succeeded",
            "world pending->ready", "world ready->executing", "world executing->succeeded",
        ])
        // The last record closes the stream; the summary goes to standard error beside it.
        #expect(objects.first?["event"] as? String == "run-started")
        #expect(objects.last?["event"] as? String == "run-finished")
        #expect((objects.last?["counts"] as? [String: Any])?["succeeded"] as? Int == 2)
        #expect(objects.last?["exit_status"] as? Int == 0)
        #expect(outcome.standardError.contains("2 succeeded"))

        // The events file holds the same transitions.
        let fileObjects = (directory.read("events.jsonl") ?? "").split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? NSDictionary
        }
        #expect(fileObjects.filter { $0["task"] != nil } == transitions.map { NSDictionary(dictionary: $0) })
    }

    @Test func aFailingPipelineExitsWith1AndShowsTheEndOfTheLog() async throws {
        let directory = try ScratchDirectory("jobgraph-cli")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              broken: {run: "echo line one; echo line two >&2; exit 7"}
              after: {needs: [broken], run: "touch after.ran"}
            """, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml"], in: directory)
        #expect(outcome.status == 1)
        let lines = outcome.outputLines
        let failure = try #require(lines.firstIndex { $0.hasPrefix("broken failed: exit 7") }, "\(lines)")
        #expect(lines[failure].contains(".jobgraph/logs/broken.log"))
        #expect(Array(lines[(failure + 1)...].prefix(2)) == ["    line one", "    line two"])
        #expect(lines.contains { $0.hasPrefix("1 failed, 1 skipped in ") })
        #expect(!directory.exists("after.ran"))
        #expect(directory.read(".jobgraph/logs/broken.log") == "line one\nline two\n")
    }

    @Test func aFailureThatPrintedNothingNamesNoLog() async throws {
        let directory = try ScratchDirectory("jobgraph-cli")
        defer { directory.remove() }
        try directory.write("version: 1\ntasks:\n  silent: {run: \"exit 3\"}\n", to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml"], in: directory)
        #expect(outcome.status == 1)
        let failure = try #require(outcome.outputLines.first { $0.hasPrefix("silent failed: exit 3") }, "\(outcome.outputLines)")
        #expect(!failure.contains("log:"), "names a log the task never wrote: \(failure)")
        #expect(!directory.exists(".jobgraph/logs/silent.log"))
    }

    @Test func plainProgressIsTheDefaultWithoutATerminal() async throws {
        let directory = try ScratchDirectory("jobgraph-cli")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              greet: {run: "echo hi"}
            """, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml"], in: directory)
        #expect(outcome.status == 0)
        #expect(outcome.outputLines.contains { $0.hasSuffix("greet  ready -> executing") })
        #expect(outcome.outputLines.contains("greet | hi"))
        #expect(!outcome.standardOutput.contains("\u{1B}"))
    }
}
