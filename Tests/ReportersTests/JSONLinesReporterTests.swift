import Foundation
import Testing
import Execution
import JobGraphBasics
import PipelineModel
@testable import Reporters

@Suite struct JSONLinesReporterTests {
    private func objects(_ lines: [String]) throws -> [[String: Any]] {
        try lines.map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try #require(object as? [String: Any], "not an object: \(line)")
        }
    }

    private func parsedTime(_ value: Any?) throws -> Date {
        let text = try #require(value as? String)
        return try Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)
    }

    /// The keys of a line in the order written, read from the text (JSONSerialization forgets the order).
    private func keyOrder(_ line: String) throws -> [String] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let positions = try object.keys.map { key -> (String, String.Index) in
            let range = try #require(line.range(of: "\"\(key)\":"), "no key \(key) in \(line)")
            return (key, range.lowerBound)
        }
        return positions.sorted { $0.1 < $1.1 }.map(\.0)
    }

    @Test func everyLineNamesItsEventAndKeepsOneKeyOrder() throws {
        let output = try ConsoleFile()
        let reporter = JSONLinesReporter(sink: output.console, now: { Events.start })
        reporter.observe(Events.started())
        reporter.observe(Events.transition("compile[a]", .ready, .executing, at: 0.25, queue: "build"))
        var failed = TaskTransition(time: Events.start.addingTimeInterval(1.5), elapsed: 1.5, task: "compile[a]", from: .executing,
                                    to: .failed, attempt: 2, queue: "build", exitCode: 2, error: "exit status 2\n\"quoted\"",
                                    duration: 1.25)
        failed.reason = "input 'a.c' changed"
        failed.executorJob = "1234_7"
        reporter.observe(.transition(failed))
        reporter.observe(.output(task: "compile[a]", line: "not in the event stream"))
        reporter.observe(Events.transition("up", .pending, .upToDate, at: 1.75))

        let lines = output.lines
        let records = try objects(lines)
        try #require(records.count == 4)
        #expect(try keyOrder(lines[0]) == ["time", "elapsed", "event", "pipeline", "version", "tasks", "jobs"])
        #expect(records[0]["event"] as? String == "run-started")
        #expect(records[0]["pipeline"] as? String == "photos.yaml")
        #expect(records[0]["tasks"] as? Int == 3)
        #expect(records[0]["jobs"] as? Int == 2)
        #expect(records[0]["version"] as? String == JobGraphVersion.current)

        let base = ["time", "elapsed", "event", "task", "from", "to", "attempt", "queue"]
        #expect(try keyOrder(lines[1]) == base)
        #expect(records[1]["event"] as? String == "transition")
        #expect(records[1]["task"] as? String == "compile[a]")
        #expect(records[1]["from"] as? String == "ready")
        #expect(records[1]["to"] as? String == "executing")
        #expect(records[1]["attempt"] as? Int == 1)
        #expect(records[1]["queue"] as? String == "build")
        #expect(records[1]["elapsed"] as? Double == 0.25)
        let time = try parsedTime(records[1]["time"])
        #expect(abs(time.timeIntervalSince(Events.start) - 0.25) < 0.001)
        #expect((records[1]["time"] as? String)?.contains(".250") == true)

        #expect(try keyOrder(lines[2]) == base + ["exit_code", "error", "duration", "reason", "slurm_job"])
        #expect(records[2]["exit_code"] as? Int == 2)
        #expect(records[2]["error"] as? String == "exit status 2\n\"quoted\"")
        #expect(records[2]["duration"] as? Double == 1.25)
        #expect(records[2]["attempt"] as? Int == 2)
        #expect(records[2]["reason"] as? String == "input 'a.c' changed")
        #expect(records[2]["slurm_job"] as? String == "1234_7")

        #expect(records[3]["to"] as? String == "up-to-date")
        #expect(records[3]["exit_code"] == nil)
    }

    /// A batch of events is written in a few writes of whole lines, each record as one event alone gives it.
    @Test func aBatchWritesTheSameRecordsInFewWrites() throws {
        var events = [Events.started(taskCount: 1_000)]
        for index in 0..<1_000 {
            let task = TaskID("t\(index)")
            events += [Events.transition(task, .ready, .executing, at: 0.1, reason: "up-to-date"),
                       Events.transition(task, .executing, .upToDate, at: 0.2, duration: 0, reason: "up-to-date")]
        }
        let oneByOne = CapturedWrites(), batched = CapturedWrites()
        let single = JSONLinesReporter(sink: oneByOne, now: { Events.start }), batch = JSONLinesReporter(sink: batched, now: { Events.start })
        for event in events { single.observe(event) }
        batch.observe(batch: events)
        #expect(batched.text == oneByOne.text)
        #expect(oneByOne.writes.count == 2_001)
        #expect(batched.writes.count <= batched.text.utf8.count / (1 << 16) + 1)
        #expect(batched.writes.allSatisfy { $0.hasSuffix("\n") }, "every write ends a line")
        // Records written after the batch go out one by one again.
        batch.observe(Events.transition("late", .pending, .skipped, at: 0.3))
        #expect(batched.writes.last?.contains("\"task\":\"late\"") == true)
    }

    @Test func progressIsThrottledPerTaskByEventTime() throws {
        let output = try ConsoleFile()
        var now = Events.start
        let reporter = JSONLinesReporter(sink: output.console, now: { now })
        reporter.observe(Events.started())
        for step in 0..<20 {  // every 0.1 s for 2 s, two tasks interleaved
            now = Events.start.addingTimeInterval(Double(step) * 0.1)
            reporter.observe(.progress(task: "photo[0]", bytes: Int64(step) * 100, total: 2000))
            reporter.observe(.progress(task: "photo[1]", bytes: Int64(step) * 10, total: nil))
        }

        let records = try objects(output.lines)
        let first = records.filter { $0["task"] as? String == "photo[0]" }
        let second = records.filter { $0["task"] as? String == "photo[1]" }
        #expect(first.map { $0["bytes"] as? Int } == [0, 500, 1000, 1500])
        #expect(second.count == 4)
        #expect(Set(first[1].keys) == ["time", "elapsed", "event", "task", "bytes", "total"])
        #expect(first[1]["event"] as? String == "progress")
        #expect(first[1]["total"] as? Int == 2000)
        #expect(first[1]["elapsed"] as? Double == 0.5)
        #expect(second[0]["total"] == nil)
        _ = try parsedTime(first[1]["time"])
    }

    @Test func runFinishedCountsEveryTerminalStateAndGivesTheExitStatus() throws {
        let output = try ConsoleFile()
        let reporter = JSONLinesReporter(sink: output.console, now: { Events.start.addingTimeInterval(9.5) })
        reporter.observe(Events.started())
        reporter.observe(.finished(RunSummary(counts: [.succeeded: 3, .failed: 1, .pending: 2], wallTime: 9.5,
                                              criticalPath: ["a", "b"], failures: [], stop: .interrupt)))

        let line = try #require(output.lines.last)
        let record = try #require(try objects([line]).first)
        #expect(try keyOrder(line) == ["time", "elapsed", "event", "counts", "wall_time", "exit_status", "stopped_by", "critical_path"])
        #expect(record["event"] as? String == "run-finished")
        let counts = try #require(record["counts"] as? [String: Int])
        #expect(counts == ["succeeded": 3, "failed": 1, "cancelled": 0, "skipped": 0, "up-to-date": 0, "pending": 2])
        #expect(line.contains(#""counts":{"pending":2,"succeeded":3,"failed":1,"cancelled":0,"skipped":0,"up-to-date":0}"#))
        #expect(record["wall_time"] as? Double == 9.5)
        #expect(record["elapsed"] as? Double == 9.5)
        #expect(record["exit_status"] as? Int == 130)
        #expect(record["stopped_by"] as? String == "SIGINT")
        #expect(record["critical_path"] as? [String] == ["a", "b"])
        _ = try parsedTime(record["time"])
    }

    @Test func eventsFileIsTruncatedWrittenAndClosed() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("events-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }  // a leftover temp file is harmless
        try Data("old contents that must go\n".utf8).write(to: url)

        let reporter = try JSONLinesReporter(path: url.path, now: { Events.start })
        reporter.observe(Events.started())
        reporter.observe(Events.transition("a", .ready, .executing, at: 0.5))
        reporter.observe(Events.transition("a", .executing, .succeeded, at: 1, duration: 0.5))
        reporter.close()
        reporter.observe(Events.transition("b", .ready, .executing, at: 2))  // after close: ignored, no crash

        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map(String.init)
        let records = try objects(lines)
        #expect(records.map { $0["to"] as? String } == [nil, "executing", "succeeded"])
    }

    @Test func unopenableEventsFileThrowsWithThePath() {
        let path = "/nonexistent-\(UUID().uuidString)/events.jsonl"
        #expect {
            _ = try JSONLinesReporter(path: path)
        } throws: { error in
            let error = error as? EventFileError
            return error?.path == path
                && error?.description == "cannot open event file '\(path)': No such file or directory"
        }
    }
}
