import Execution
import Foundation
import JobGraphTestSupport
import PipelineModel
import Testing
@testable import Reporters

/// `--trace FILE` from a known event sequence: the Chrome trace-event JSON that Perfetto and
/// chrome://tracing read (`X` complete events in microseconds, `M` thread names per track).
@Suite struct ChromeTraceWriterTests {
    /// Feeds `events` to a writer, closes it and returns the parsed file.
    private func trace(of events: [RunEvent]) throws -> [String: Any] {
        let directory = try ScratchDirectory("jobgraph-trace")
        defer { directory.remove() }
        let writer = ChromeTraceWriter(path: directory.file("trace.json"))
        events.forEach(writer.observe)
        writer.close()
        let text = try #require(directory.read("trace.json"))
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    private func completeEvents(_ trace: [String: Any]) -> [[String: Any]] {
        ((trace["traceEvents"] as? [[String: Any]]) ?? []).filter { $0["ph"] as? String == "X" }
    }

    @Test func eachExecutionIsACompleteEventInMicrosecondsOnTheLowestFreeTrack() throws {
        let trace = try trace(of: [
            Events.started(),
            Events.transition("a", .ready, .executing, at: 0.5),
            Events.transition("b", .ready, .executing, at: 0.75, queue: "net"),
            Events.transition("a", .executing, .succeeded, at: 1.5, exitCode: 0, duration: 1),
            // `c` takes the track `a` freed; `b` keeps its own.
            Events.transition("c", .ready, .executing, at: 1.5),
            Events.transition("b", .executing, .succeeded, at: 2, queue: "net", exitCode: 0, duration: 1.25),
            Events.transition("c", .executing, .failed, at: 2.25, exitCode: 2, error: "exit status 2", duration: 0.75),
            .finished(RunSummary(counts: [.succeeded: 2, .failed: 1], wallTime: 2.25, criticalPath: [], failures: [], stop: nil)),
        ])
        #expect(trace["displayTimeUnit"] as? String == "ms")
        let slices = completeEvents(trace)
        #expect(slices.compactMap { $0["name"] as? String } == ["a", "b", "c"])
        #expect(slices.compactMap { $0["ts"] as? Int } == [500_000, 750_000, 1_500_000])
        #expect(slices.compactMap { $0["dur"] as? Int } == [1_000_000, 1_250_000, 750_000])
        #expect(slices.compactMap { $0["tid"] as? Int } == [1, 2, 1])
        #expect(slices.compactMap { $0["pid"] as? Int } == [1, 1, 1])
        #expect(slices.compactMap { $0["cat"] as? String } == ["default", "net", "default"])
        #expect(slices[0]["args"] as? [String: String] == ["state": "succeeded", "attempt": "1", "queue": "default", "exit_code": "0"])
        #expect(slices[2]["args"] as? [String: String]
                == ["state": "failed", "attempt": "1", "queue": "default", "exit_code": "2", "error": "exit status 2"])

        let names = ((trace["traceEvents"] as? [[String: Any]]) ?? []).filter { $0["ph"] as? String == "M" }
        #expect(names.count == 2)
        #expect(names.compactMap { ($0["args"] as? [String: String])?["name"] } == ["slot 1", "slot 2"])
        #expect(names.allSatisfy { $0["name"] as? String == "thread_name" && $0["pid"] as? Int == 1 })
    }

    @Test func aRetriedTaskHasOneEventPerAttempt() throws {
        let slices = completeEvents(try trace(of: [
            Events.transition("flaky", .ready, .executing, at: 0),
            Events.transition("flaky", .executing, .failed, at: 0.25, exitCode: 1, error: "exit status 1; retrying"),
            Events.transition("flaky", .failed, .executing, at: 1.25, attempt: 2),
            Events.transition("flaky", .executing, .succeeded, at: 1.5, attempt: 2, exitCode: 0),
        ]))
        #expect(slices.count == 2)
        #expect(slices.compactMap { ($0["args"] as? [String: String])?["attempt"] } == ["1", "2"])
        #expect(slices.compactMap { ($0["args"] as? [String: String])?["state"] } == ["failed", "succeeded"])
        #expect(slices.compactMap { $0["ts"] as? Int } == [0, 1_250_000])
        #expect(slices.compactMap { $0["tid"] as? Int } == [1, 1])
    }

    @Test func tasksThatNeverExecuteLeaveNoEvent() throws {
        let slices = completeEvents(try trace(of: [
            Events.transition("skipped", .pending, .skipped, at: 0.1),
            Events.transition("cancelled", .ready, .cancelled, at: 0.2),
            Events.transition("stopped", .ready, .executing, at: 0.3),
            Events.transition("stopped", .executing, .cancelled, at: 0.4, exitCode: 143),
        ]))
        #expect(slices.compactMap { $0["name"] as? String } == ["stopped"])
        #expect((slices.first?["args"] as? [String: String])?["state"] == "cancelled")
    }

    @Test func anInstantExecutionLastsAtLeastOneMicrosecond() throws {
        // Zero-length slices vanish in some viewers.
        let slices = completeEvents(try trace(of: [
            Events.transition("quick", .ready, .executing, at: 1),
            Events.transition("quick", .executing, .upToDate, at: 1),
        ]))
        #expect(slices.first?["dur"] as? Int == 1)
    }

    @Test func aRunWithoutExecutionsIsStillAValidTrace() throws {
        let trace = try trace(of: [Events.started(taskCount: 0)])
        #expect((trace["traceEvents"] as? [Any])?.isEmpty == true)
    }

    @Test func manyOverlappingTasksNeverShareATrackAtOnce() throws {
        // Four executing at once at most, started and ended in a shuffled but fixed order.
        var events: [RunEvent] = []
        var time = 0.0
        var running: [String] = []
        for number in 0..<40 {
            if running.count == 4 {
                let ending = running.remove(at: (number * 7) % running.count)
                time += 0.01
                events.append(Events.transition(TaskID(ending), .executing, .succeeded, at: time, exitCode: 0))
            }
            let name = "t\(number)"
            running.append(name)
            time += 0.01
            events.append(Events.transition(TaskID(name), .ready, .executing, at: time))
        }
        for name in running {
            time += 0.01
            events.append(Events.transition(TaskID(name), .executing, .succeeded, at: time, exitCode: 0))
        }
        let slices = completeEvents(try trace(of: events))
        #expect(slices.count == 40)
        let tracks = Set(slices.compactMap { $0["tid"] as? Int })
        #expect(tracks == [1, 2, 3, 4])
        for track in tracks {
            let spans = slices.filter { $0["tid"] as? Int == track }
                .compactMap { slice -> (Int, Int)? in
                    guard let start = slice["ts"] as? Int, let duration = slice["dur"] as? Int else { return nil }
                    return (start, start + duration)
                }
                .sorted { $0.0 < $1.0 }
            for (earlier, later) in zip(spans, spans.dropFirst()) {
                #expect(earlier.1 <= later.0, "two slices overlap on track \(track)")
            }
        }
    }

    @Test func theFileIsReplacedWholeNotAppendedTo() throws {
        let directory = try ScratchDirectory("jobgraph-trace")
        defer { directory.remove() }
        try directory.write(String(repeating: "old trace ", count: 1000), to: "trace.json")
        let writer = ChromeTraceWriter(path: directory.file("trace.json"))
        writer.observe(Events.transition("a", .ready, .executing, at: 0))
        writer.observe(Events.transition("a", .executing, .succeeded, at: 1, exitCode: 0))
        writer.close()
        let text = try #require(directory.read("trace.json"))
        #expect(!text.contains("old trace"))
        #expect(try JSONSerialization.jsonObject(with: Data(text.utf8)) is [String: Any])
    }
}
