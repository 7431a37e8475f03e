import Foundation
import JobGraphTestSupport
import Testing

/// `jobgraph history FILE` through the built binary after real runs (contract: the command line): the
/// latest runs, the slowest tasks and the flaky ones, as text and as `--json` with snake_case keys.
@Suite(.hangLimit(minutes: 1))
struct HistoryCommandTests {
    /// `flaky` fails its first attempt ever, then succeeds on retry; `gate`, which runs last, fails once
    /// `fail-now` exists, with its definition unchanged. `slow` takes 1.5 s: under ThreadSanitizer in CI's
    /// full run, `gate`'s `test` was measured at 0.47 s, ahead of a 0.4 s `slow`.
    static let pipeline = """
        version: 1
        tasks:
          slow: {run: "sleep 1.5"}
          quick: {run: "true"}
          flaky: {run: "if [ -e flaked ]; then exit 0; fi; touch flaked; exit 1", retries: 2, retry_delay: 0s}
          gate: {needs: [slow, quick, flaky], run: "test ! -e fail-now"}
        """

    /// Two good runs (the first with `flaky` retried), then one where `gate` fails.
    private func folderWithThreeRuns() async throws -> PipelineFolder {
        let folder = try PipelineFolder(Self.pipeline)
        let first = try await folder.run()
        #expect(first.status == 0, "\(first.outcome.standardError)")
        #expect(first.events.filter { $0["task"] as? String == "flaky" && $0["to"] as? String == "executing" }.count == 2)
        #expect(try await folder.run().status == 0)
        try folder.write("", to: "fail-now")
        #expect(try await folder.run().status == 1)
        return folder
    }

    @Test func textShowsRunsNewestFirstTheSlowestTasksAndTheFlakyOnes() async throws {
        let folder = try await folderWithThreeRuns()
        defer { folder.remove() }
        let history = try await folder.history()
        #expect(history.status == 0, "\(history.standardError)")
        let lines = history.outputLines
        #expect(lines.first == "runs of p.yaml, newest first")
        #expect(lines.dropFirst().first?.split(separator: " ", omittingEmptySubsequences: true)
                    == ["RUN", "STARTED", "OUTCOME", "DURATION", "TASKS"])
        let rows = lines.filter { $0.hasPrefix("  #") }
        #expect(rows.count == 3)
        #expect(rows.map { $0.split(separator: " ")[0] } == ["#3", "#2", "#1"])
        #expect(rows[0].contains(" failed ") && rows[0].hasSuffix("1 failed, 3 succeeded"), "\(rows[0])")
        #expect(rows[1].contains(" succeeded ") && rows[1].hasSuffix("4 succeeded"), "\(rows[1])")
        // A start time and a duration in the run summary's form.
        #expect(rows[2].contains(try Regex(#"#1 +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +succeeded +\d+\.\d\ds"#)), "\(rows[2])")

        // Longest median first. `slow` sleeps 1.5 s and the others do next to nothing, yet under ThreadSanitizer
        // on a loaded machine `gate` was measured at 2.1 s: which task comes first is the measurements' to say.
        let slowest = try #require(lines.firstIndex(of: "slowest tasks (median of their latest successful runs)"))
        let timings = lines[(slowest + 1)...].prefix { $0.hasPrefix("  ") }
        let medians = timings.compactMap { $0.split(separator: " ").dropFirst().first.flatMap { Double($0.dropLast()) } }
        #expect(medians.count == timings.count && zip(medians, medians.dropFirst()).allSatisfy { $0 >= $1 }, "\(timings)")
        let slowRow = try #require(timings.first { $0.hasPrefix("  slow ") }).split(separator: " ")
        #expect(slowRow.dropFirst().first.flatMap { Double($0.dropLast()) }.map { $0 >= 1.5 } == true, "\(slowRow)")
        #expect(slowRow.suffix(2) == ["3", "runs"])

        let flaky = try #require(lines.firstIndex(of: "flaky tasks (retried, or changed outcome without a change of definition)"))
        let flakyRows = lines[(flaky + 1)...]
        #expect(flakyRows.contains { $0.hasPrefix("  flaky ") && $0.contains("retried in 1 of 3 runs") && $0.hasSuffix("failed 0 of 3") },
                "\(Array(flakyRows))")
        #expect(flakyRows.contains { $0.hasPrefix("  gate ") && $0.contains("outcome changed once") && $0.hasSuffix("failed 1 of 3") },
                "\(Array(flakyRows))")
        #expect(!flakyRows.contains { $0.hasPrefix("  slow ") || $0.hasPrefix("  quick ") })
    }

    @Test func jsonHasSnakeCaseKeysAndTheSameFacts() async throws {
        let folder = try await folderWithThreeRuns()
        defer { folder.remove() }
        let history = try await folder.history(["--json"])
        #expect(history.status == 0, "\(history.standardError)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(history.standardOutput.utf8)) as? [String: Any])
        #expect(Set(report.keys) == ["pipeline", "runs", "slowest_tasks", "flaky_tasks"])
        let badKeys = Self.keys(in: report).filter { key in
            !key.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
        }
        #expect(badKeys.isEmpty, "keys not in snake_case: \(badKeys)")
        #expect(report["pipeline"] as? String == "p.yaml")

        let runs = try #require(report["runs"] as? [[String: Any]])
        #expect(runs.compactMap { $0["id"] as? Int } == [3, 2, 1])
        #expect(runs.compactMap { $0["outcome"] as? String } == ["failed", "succeeded", "succeeded"])
        #expect(runs.allSatisfy { $0["task_count"] as? Int == 4 })
        let newest = try #require(runs.first)
        #expect(Set(newest.keys) == ["id", "pipeline", "started_at", "ended_at", "duration", "outcome", "task_count", "tasks"])
        let counts = try #require(newest["tasks"] as? [String: Int])
        #expect(counts == ["succeeded": 3, "failed": 1, "up_to_date": 0, "skipped": 0, "cancelled": 0, "unfinished": 0])
        let dates = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let started = try dates.parse(try #require(newest["started_at"] as? String))
        let ended = try dates.parse(try #require(newest["ended_at"] as? String))
        let duration = try #require(newest["duration"] as? Double)
        #expect(abs(ended.timeIntervalSince(started) - duration) < 0.01)
        #expect(duration >= 0.4)

        // Longest median first (which task that is, the measurements say: see the text's test).
        let slowest = try #require(report["slowest_tasks"] as? [[String: Any]])
        let medians = slowest.compactMap { $0["median_duration"] as? Double }
        #expect(medians.count == slowest.count && zip(medians, medians.dropFirst()).allSatisfy { $0 >= $1 }, "\(slowest)")
        let slow = try #require(slowest.first { $0["task"] as? String == "slow" })
        // In seconds, not milliseconds.
        #expect((slow["median_duration"] as? Double).map { $0 >= 1.5 && $0 < 1000 } == true)
        #expect(slow["samples"] as? Int == 3)

        let flaky = try #require(report["flaky_tasks"] as? [[String: Any]])
        let byTask = Dictionary(uniqueKeysWithValues: flaky.compactMap { entry in (entry["task"] as? String).map { ($0, entry) } })
        #expect(Set(byTask.keys) == ["flaky", "gate"])
        #expect(byTask["flaky"]?["retried_runs"] as? Int == 1)
        #expect(byTask["flaky"]?["failures"] as? Int == 0)
        #expect(byTask["flaky"]?["runs"] as? Int == 3)
        #expect(byTask["gate"]?["outcome_changes"] as? Int == 1)
        #expect(byTask["gate"]?["failures"] as? Int == 1)
    }

    @Test func tasksAFailureKeptFromRunningAreCountedAsCancelledAndSkippedNotUnfinished() async throws {
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              fail: {run: "exit 1", priority: high}
              never: {run: "true"}
              after: {needs: [fail], run: "true"}
            """)
        defer { folder.remove() }
        let run = try await folder.run(["--jobs", "1"])
        #expect(run.status == 1)
        #expect(run.finalStates == ["fail": "failed", "never": "cancelled", "after": "skipped"])

        let text = try await folder.history()
        #expect(text.outputLines.contains { $0.contains("#1") && $0.contains(" failed ") && $0.hasSuffix("  1 failed, 1 cancelled, 1 skipped") },
                "\(text.outputLines)")
        let json = try await folder.history(["--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let counts = (report["runs"] as? [[String: Any]])?.first?["tasks"] as? [String: Int]
        #expect(counts == ["succeeded": 0, "failed": 1, "up_to_date": 0, "skipped": 1, "cancelled": 1, "unfinished": 0])
    }

    @Test func runsLimitsTheRunsShown() async throws {
        let folder = try await folderWithThreeRuns()
        defer { folder.remove() }
        let history = try await folder.history(["--json", "--runs", "1"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(history.standardOutput.utf8)) as? [String: Any])
        #expect((report["runs"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } == [3])
    }

    @Test func aPipelineInAnotherFolderIsFoundByItsPath() async throws {
        let folder = try PipelineFolder("version: 1\ntasks:\n  one: {run: \"true\"}\n")
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.directory.file("sub"), withIntermediateDirectories: false)
        try folder.directory.write("version: 1\ntasks:\n  two: {run: \"true\"}\n", to: "sub/q.yaml")
        let run = try await JobGraphBinary.run(["run", "sub/q.yaml"], in: folder.directory)
        #expect(run.status == 0)
        #expect(folder.directory.exists("sub/.jobgraph/state.db"), "state lives beside the pipeline file")
        #expect(!folder.directory.exists(".jobgraph"))

        let history = try await JobGraphBinary.run(["history", "sub/q.yaml"], in: folder.directory)
        #expect(history.outputLines.first == "runs of q.yaml, newest first", "\(history.outputLines)")
        #expect(history.outputLines.contains { $0.contains("#1") && $0.hasSuffix("1 succeeded") })
    }

    @Test func beforeAnyRunTextAndJSONSayThereAreNone() async throws {
        let folder = try PipelineFolder(Self.pipeline)
        defer { folder.remove() }
        let text = try await folder.history()
        #expect(text.status == 0)
        #expect(text.outputLines == ["no runs of p.yaml yet"])
        let json = try await folder.history(["--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        #expect((report["runs"] as? [Any])?.isEmpty == true)
        #expect((report["slowest_tasks"] as? [Any])?.isEmpty == true)
        #expect((report["flaky_tasks"] as? [Any])?.isEmpty == true)
        #expect(!folder.directory.exists(".jobgraph"), "looking at the history creates no state")
    }

    @Test func measuredDurationsDecideWhichReadyTaskStartsFirst() async throws {
        // With `--jobs 1` and no history, `head` starts first: its remaining path counts 2 tasks against
        // `long`'s 1. Once the history's medians make `long` longer than `head` + `tail` together, `long` has
        // the longer remaining critical path and starts first (contract: scheduling rules).
        // `long` sleeps 1.5 s, which one run normally measures as longer; but under ThreadSanitizer on a
        // loaded machine two `true` tasks were measured at over 0.6 s together, time spent noticing their
        // exits, and could be longer still. So, until the history (`history --json`) says `long` is longer,
        // `long` runs alone again and sleeps longer.
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              head: {run: "true"}
              tail: {needs: [head], run: "true"}
              long: {run: "sleep $(cat long.seconds)"}
            """)
        defer { folder.remove() }
        try folder.write("1.5\n", to: "long.seconds")
        let first = try await folder.run(["--jobs", "1"])
        #expect(first.executionOrder.first == "head")
        while true {
            let medians = try await Self.medianDurations(in: folder)
            let head = try #require(medians["head"]), tail = try #require(medians["tail"]), long = try #require(medians["long"])
            if long > head + tail { break }
            try folder.write(String(format: "%.3f\n", 2 * (head + tail) + 1.5), to: "long.seconds")
            let alone = try await folder.run(["--jobs", "1", "long"])
            try #require(alone.status == 0, "\(alone.outcome.standardError)")
        }
        let second = try await folder.run(["--jobs", "1"])
        #expect(second.executionOrder.first == "long", "\(second.executionOrder)")
    }

    /// Each task's median duration in seconds, as `history --json` reports the medians scheduling uses.
    private static func medianDurations(in folder: PipelineFolder) async throws -> [String: Double] {
        let history = try await folder.history(["--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(history.standardOutput.utf8)) as? [String: Any])
        let slowest = try #require(report["slowest_tasks"] as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: slowest.compactMap { entry in
            guard let task = entry["task"] as? String, let median = entry["median_duration"] as? Double else { return nil }
            return (task, median)
        })
    }

    /// Every key of every object in `value`, nested ones included.
    private static func keys(in value: Any) -> [String] {
        if let object = value as? [String: Any] {
            return object.keys + object.values.flatMap { keys(in: $0) }
        }
        if let array = value as? [Any] { return array.flatMap { keys(in: $0) } }
        return []
    }
}
