import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The event streams of real runs (the photos example, a failing run, an interrupted one and an up-to-date
/// one) are valid under `schemas/events.schema.json`, judged by python's `jsonschema`, and `--progress
/// json` writes the same stream as `--events FILE`.
@Suite(.hangLimit(minutes: 2))
struct EventSchemaTests {
    @Test func thePhotosExampleAndItsUpToDateRerunMatchTheSchema() async throws {
        let directory = try Self.photosExample()
        defer { directory.remove() }
        let first = try await JobGraphBinary.run(["run", "photos.yaml", "--jobs", "4", "--progress", "json", "--events", "first.jsonl"],
                                                 in: directory)
        #expect(first.status == 0, "\(first.standardError)")
        try directory.write(first.standardOutput, to: "first-stdout.jsonl")
        let second = try await JobGraphBinary.run(["run", "photos.yaml", "--jobs", "4", "--events", "second.jsonl"], in: directory)
        #expect(second.status == 0, "\(second.standardError)")

        let report = await Self.validate(["first.jsonl", "first-stdout.jsonl", "second.jsonl"], in: directory)
        #expect(report.contains("first.jsonl: "), "\(report)")

        let events = try Self.objects(directory.read("first.jsonl"))
        #expect(events.first?["event"] as? String == "run-started")
        #expect(events.first?["pipeline"] as? String == "photos.yaml")
        #expect(events.first?["jobs"] as? Int == 4)
        let finished = try #require(events.last)
        #expect(finished["event"] as? String == "run-finished")
        #expect(finished["exit_status"] as? Int == 0)
        let failedDownloads = events.filter { $0["to"] as? String == "failed" }
        #expect(!failedDownloads.isEmpty, "the example's misspelled names fail to download")

        // Standard output and the file carry one stream: run-started and every transition byte for byte
        // (the same event, stamped once); progress and run-finished are stamped by each writer when written.
        let fileLines = (directory.read("first.jsonl") ?? "").split(separator: "\n")
        let outputLines = first.standardOutput.split(separator: "\n")
        let stamped = { (line: Substring) in line.contains(#""event":"run-started""#) || line.contains(#""event":"transition""#) }
        #expect(fileLines.filter(stamped) == outputLines.filter(stamped))
        #expect(fileLines.count > 10)
        #expect(outputLines.last?.contains(#""event":"run-finished""#) == true)

        let rerun = try Self.objects(directory.read("second.jsonl"))
        #expect(rerun.contains { $0["to"] as? String == "up-to-date" }, "the rerun finds work up to date")
    }

    @Test func aFailingRunMatchesTheSchemaAndSaysExitStatusOne() async throws {
        let directory = try ScratchDirectory("jobgraph-events")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              broken: {run: "echo 'a \\"quoted\\" line'; exit 3"}
              after: {needs: [broken], run: "true"}
            """, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--events", "events.jsonl"], in: directory)
        #expect(outcome.status == 1)
        _ = await Self.validate(["events.jsonl"], in: directory)
        let events = try Self.objects(directory.read("events.jsonl"))
        let failed = try #require(events.first { $0["to"] as? String == "failed" })
        #expect(failed["exit_code"] as? Int == 3)
        #expect(events.last?["exit_status"] as? Int == 1)
        #expect((events.last?["counts"] as? [String: Int])?["failed"] == 1)
    }

    @Test func anInterruptedRunMatchesTheSchemaAndSaysExitStatus130() async throws {
        let directory = try ScratchDirectory("jobgraph-events")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              long: {run: "exec sleep 300.914"}
              later: {needs: [long], run: "true"}
            """, to: "p.yaml")
        let running = try JobGraphBinary.start(["run", "p.yaml", "--events", "events.jsonl"], in: directory)
        #expect(await running.waitForTransitions(to: "executing", in: "events.jsonl"))
        running.send(SIGINT)
        let outcome = try await running.finish()
        #expect(outcome.status == 130)
        _ = await Self.validate(["events.jsonl"], in: directory)
        let finished = try #require(try Self.objects(directory.read("events.jsonl")).last)
        #expect(finished["event"] as? String == "run-finished")
        #expect(finished["exit_status"] as? Int == 130)
        #expect(finished["stopped_by"] as? String == "SIGINT")
        #expect(ProcessTable.living(withArgument: "300.914").isEmpty)
    }

    // MARK: - Helpers

    /// A scratch copy of `examples/photos.yaml` and its scripts, serving on a free port instead of 8765.
    static func photosExample() throws -> ScratchDirectory {
        let directory = try ScratchDirectory("jobgraph-photos")
        let examples = Fixtures.repositoryRoot.appendingPathComponent("examples")
        let port = try LoopbackSocket.freePort()
        let text = try String(contentsOf: examples.appendingPathComponent("photos.yaml"), encoding: .utf8)
            .replacingOccurrences(of: "8765", with: "\(port)")
        try directory.write(text, to: "photos.yaml")
        try FileManager.default.copyItem(atPath: examples.appendingPathComponent("photos").path, toPath: directory.file("photos"))
        return directory
    }

    /// Runs `Tests/schema/validate-events.py` on files in `directory`; records its complaints as failures.
    /// - Returns: what it printed.
    @discardableResult
    static func validate(_ files: [String], in directory: ScratchDirectory) async -> String {
        let root = Fixtures.repositoryRoot
        let result = await ExternalProgram.run("/usr/bin/env", [
            "python3", root.appendingPathComponent("Tests/schema/validate-events.py").path,
            root.appendingPathComponent("schemas/events.schema.json").path,
        ] + files.map(directory.file))
        let output = result.output + result.errorOutput
        switch result.status {
        case 0: break
        case 3: Issue.record("the event schema check needs the Python package 'jsonschema' (.ci/install-deps --with-test-tools)\n\(output)")
        default: Issue.record("events do not match schemas/events.schema.json:\n\(output)")
        }
        return output
    }

    static func objects(_ text: String?) throws -> [[String: Any]] {
        try (text ?? "").split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not an object: \(line)")
        }
    }
}
