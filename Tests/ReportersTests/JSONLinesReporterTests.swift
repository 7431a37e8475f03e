import Foundation
import Testing
import Execution
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

    @Test func transitionsCarryExactlyTheContractFields() throws {
        let output = try ConsoleFile()
        let reporter = JSONLinesReporter(sink: output.console, now: { Events.start })
        reporter.observe(Events.started())
        reporter.observe(Events.transition("compile[a]", .ready, .executing, at: 0.25, queue: "build"))
        reporter.observe(Events.transition("compile[a]", .executing, .failed, at: 1.5, attempt: 2, queue: "build",
                                           exitCode: 2, error: "exit status 2", duration: 1.25))
        reporter.observe(.output(task: "compile[a]", line: "not in the event stream"))
        reporter.observe(Events.transition("up", .pending, .upToDate, at: 1.75))

        let records = try objects(output.lines)
        try #require(records.count == 3)
        let baseKeys: Set = ["time", "elapsed", "task", "from", "to", "attempt", "queue"]
        #expect(Set(records[0].keys) == baseKeys)
        #expect(records[0]["task"] as? String == "compile[a]")
        #expect(records[0]["from"] as? String == "ready")
        #expect(records[0]["to"] as? String == "executing")
        #expect(records[0]["attempt"] as? Int == 1)
        #expect(records[0]["queue"] as? String == "build")
        #expect(records[0]["elapsed"] as? Double == 0.25)
        let time = try parsedTime(records[0]["time"])
        #expect(abs(time.timeIntervalSince(Events.start) - 0.25) < 0.001)
        #expect((records[0]["time"] as? String)?.contains(".250") == true)

        #expect(Set(records[1].keys) == baseKeys.union(["exit_code", "error", "duration"]))
        #expect(records[1]["exit_code"] as? Int == 2)
        #expect(records[1]["error"] as? String == "exit status 2")
        #expect(records[1]["duration"] as? Double == 1.25)
        #expect(records[1]["attempt"] as? Int == 2)

        #expect(records[2]["to"] as? String == "up-to-date")
        #expect(records[2]["exit_code"] == nil)
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
        #expect(Set(first[1].keys) == ["time", "elapsed", "task", "event", "bytes", "total"])
        #expect(first[1]["event"] as? String == "progress")
        #expect(first[1]["total"] as? Int == 2000)
        #expect(first[1]["elapsed"] as? Double == 0.5)
        #expect(second[0]["total"] == nil)
        _ = try parsedTime(first[1]["time"])
    }

    @Test func finishedCountsEveryTerminalStateAndTheWallTime() throws {
        let output = try ConsoleFile()
        let reporter = JSONLinesReporter(sink: output.console, now: { Events.start.addingTimeInterval(9.5) })
        reporter.observe(Events.started())
        reporter.observe(.finished(RunSummary(counts: [.succeeded: 3, .failed: 1, .pending: 2], wallTime: 9.5,
                                              criticalPath: ["a", "b"], failures: [], stop: .interrupt)))

        let record = try #require(try objects(output.lines).first)
        #expect(record["event"] as? String == "finished")
        #expect(record["succeeded"] as? Int == 3)
        #expect(record["failed"] as? Int == 1)
        #expect(record["cancelled"] as? Int == 0)
        #expect(record["skipped"] as? Int == 0)
        #expect(record["up-to-date"] as? Int == 0)
        #expect(record["pending"] as? Int == 2)
        #expect(record["executing"] == nil)
        #expect(record["wall_time"] as? Double == 9.5)
        #expect(record["elapsed"] as? Double == 9.5)
        #expect(record["stopped_by"] as? String == "SIGINT")
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
        #expect(records.map { $0["to"] as? String } == ["executing", "succeeded"])
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
