import Foundation
import JobGraphTestSupport
import Testing

/// `jobgraph run --trace FILE` through the built binary: Chrome trace-event JSON that Perfetto opens, one
/// complete (`X`) event per executing attempt, on no more tracks than `--jobs` (contract: `run` options).
@Suite(.hangLimit(minutes: 1))
struct TraceTests {
    static let pipeline = """
        version: 1
        tasks:
          a: {run: "sleep 0.3"}
          b: {run: "sleep 0.1"}
          c: {run: "sleep 0.2"}
          d: {needs: [a], run: "sleep 0.1"}
          flaky: {run: "if [ -e flaked ]; then exit 0; fi; touch flaked; exit 3", retries: 1, retry_delay: 0s}
          broken: {run: "exit 4", allow_failure: true}
        """

    /// One complete event, as the trace holds it.
    struct Slice {
        var name: String
        var start: Int
        var duration: Int
        var track: Int
        var arguments: [String: String]
        var end: Int { start + duration }
    }

    /// The trace's complete events and the named tracks, after checking the file's outer shape.
    private func slices(in folder: PipelineFolder, file: String = "trace.json") throws -> (slices: [Slice], tracks: [Int: String]) {
        let text = try #require(folder.directory.read(file), "no trace file")
        let trace = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let events = try #require(trace["traceEvents"] as? [[String: Any]])
        var slices: [Slice] = []
        var tracks: [Int: String] = [:]
        for event in events {
            switch event["ph"] as? String {
            case "X":
                slices.append(Slice(
                    name: try #require(event["name"] as? String), start: try #require(event["ts"] as? Int),
                    duration: try #require(event["dur"] as? Int), track: try #require(event["tid"] as? Int),
                    arguments: try #require(event["args"] as? [String: String])))
                #expect(event["pid"] as? Int == 1)
            case "M":
                #expect(event["name"] as? String == "thread_name")
                let track = try #require(event["tid"] as? Int)
                tracks[track] = (event["args"] as? [String: String])?["name"]
            default:
                Issue.record("unexpected event \(event)")
            }
        }
        return (slices, tracks)
    }

    @Test(arguments: [1, 2, 3])
    func oneSlicePerAttemptOnAtMostJobsTracks(jobs: Int) async throws {
        let folder = try PipelineFolder(Self.pipeline)
        defer { folder.remove() }
        let run = try await folder.run(["--jobs", String(jobs), "--trace", "trace.json"])
        #expect(run.status == 0, "\(run.outcome.standardError)")
        let (slices, tracks) = try slices(in: folder)

        // Six tasks, and `flaky`'s second attempt.
        #expect(slices.count == 7)
        #expect(slices.count == run.executionOrder.count)
        #expect(slices.map(\.name).sorted() == ["a", "b", "broken", "c", "d", "flaky", "flaky"])
        let used = Set(slices.map(\.track))
        #expect(used.count <= jobs)
        #expect(used.isSubset(of: Set(1...jobs)))
        #expect(Set(tracks.keys) == used)
        #expect(tracks.values.allSatisfy { $0.hasPrefix("slot ") })
        for track in used {
            let onTrack = slices.filter { $0.track == track }.sorted { $0.start < $1.start }
            for (earlier, later) in zip(onTrack, onTrack.dropFirst()) {
                #expect(earlier.end <= later.start, "\(earlier.name) and \(later.name) overlap on track \(track)")
            }
        }
        // At any moment no more slices are open than `--jobs`.
        // Ends sort before starts at the same instant: a slot freed and taken again is not two at once.
        let starts: [(time: Int, change: Int)] = slices.map { ($0.start, 1) }
        let ends: [(time: Int, change: Int)] = slices.map { ($0.end, -1) }
        let boundaries = (starts + ends).sorted { $0.time != $1.time ? $0.time < $1.time : $0.change < $1.change }
        var open = 0, most = 0
        for (_, change) in boundaries {
            open += change
            most = max(most, open)
        }
        #expect(most <= jobs)

        let byName = Dictionary(grouping: slices, by: \.name)
        #expect(byName["a"]?.first.map { $0.duration >= 300_000 } == true, "durations are in microseconds")
        #expect(byName["a"]?.first?.arguments["state"] == "succeeded")
        #expect(byName["a"]?.first?.arguments["exit_code"] == "0")
        #expect(byName["broken"]?.first?.arguments["state"] == "failed")
        #expect(byName["broken"]?.first?.arguments["exit_code"] == "4")
        let flaky = (byName["flaky"] ?? []).sorted { $0.start < $1.start }
        #expect(flaky.map { $0.arguments["attempt"] } == ["1", "2"])
        #expect(flaky.map { $0.arguments["state"] } == ["failed", "succeeded"])
        #expect(flaky.first?.arguments["exit_code"] == "3")
        if let d = byName["d"]?.first, let a = byName["a"]?.first { #expect(a.end <= d.start, "d needs a") }
    }

    @Test func aRunOfUpToDateTasksStillWritesAValidTrace() async throws {
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              make: {run: "echo x > x.txt", outputs: [x.txt]}
            """)
        defer { folder.remove() }
        _ = try await folder.run()
        let rerun = try await folder.run(["--trace", "trace.json"])
        #expect(rerun.finalStates == ["make": "up-to-date"])
        let (slices, _) = try slices(in: folder)
        // The check ran on a slot, as the event stream says: its slice carries the state it found.
        #expect(slices.map { $0.arguments["state"] } == ["up-to-date"])
    }

    /// The task succeeded, but the trace the user asked for is missing: said, and the status is 1 (issue 15).
    @Test func anUnwritableTraceIsSaidAndFailsTheRun() async throws {
        let folder = try PipelineFolder("version: 1\ntasks:\n  one: {run: \"true\"}\n")
        defer { folder.remove() }
        let run = try await folder.run(["--trace", "missing-folder/trace.json"])
        #expect(run.status == 1)
        #expect(run.finalStates == ["one": "succeeded"])
        #expect(run.outcome.errorLines == ["warning: cannot write the trace 'missing-folder/trace.json': No such file or directory"],
                "\(run.outcome.standardError)")
    }
}
