import Foundation
import JobGraphTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A project folder holding one pipeline file, `p.yaml`, run through the built binary again and again
/// as a user reruns a build: each run's events go to a file of their own, so a test reads what that run
/// did to every task.
struct PipelineFolder {
    let directory: ScratchDirectory
    private let runCount = Counter()

    init(_ yaml: String, prefix: String = "jobgraph-state-cli") throws {
        directory = try ScratchDirectory(prefix)
        try directory.write(yaml, to: "p.yaml")
    }

    /// Replaces the pipeline file, as a user editing it would.
    func rewrite(_ yaml: String) throws {
        try directory.write(yaml, to: "p.yaml")
    }

    /// Adds a comment line to the pipeline file: other bytes that say the same, so no task changes.
    func addComment(_ text: String) throws {
        try directory.write((directory.read("p.yaml") ?? "") + "# \(text)\n", to: "p.yaml")
    }

    /// Puts the anchor `&name` on the pipeline's `version` (in place of any anchor there): other YAML
    /// content, but the same pipeline, so no task changes.
    func restate(_ name: String) throws {
        let text = directory.read("p.yaml") ?? ""
        let restated = text.replacingOccurrences(of: #"(?m)^version: (&\S+ )?"#, with: "version: &\(name) ",
                                                 options: .regularExpression)
        #expect(restated != text, "p.yaml has no 'version:' line to restate")
        try directory.write(restated, to: "p.yaml")
    }

    /// Writes `text` to `name`, creating folders on the way.
    func write(_ text: String, to name: String) throws {
        try FileManager.default.createDirectory(atPath: (directory.file(name) as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try directory.write(text, to: name)
    }

    /// Sets the modification time of `name` without touching its content, as `touch -d` does.
    func setModificationTime(of name: String, to date: Date) throws {
        try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: directory.file(name))
    }

    /// The modification time of `name`, or `nil` when it is missing.
    func modificationTime(of name: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: directory.file(name)))?[.modificationDate] as? Date
    }

    func delete(_ name: String) throws {
        try FileManager.default.removeItem(atPath: directory.file(name))
    }

    /// A fresh name for the events file of the next run.
    func nextEventsFile() -> String { "events-\(runCount.increment()).jsonl" }

    /// `jobgraph run p.yaml extra…` to its end, with its events in a file of its own.
    func run(_ extra: [String] = [], environment: [String: String] = JobGraphBinary.environment) async throws -> RunResult {
        let events = nextEventsFile()
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--progress", "plain", "--events", events] + extra,
                                                   in: directory, environment: environment)
        return RunResult(outcome: outcome, events: Self.events(in: directory.read(events) ?? ""))
    }

    /// `jobgraph history p.yaml extra…` to its end.
    func history(_ extra: [String] = []) async throws -> JobGraphBinary.Outcome {
        try await JobGraphBinary.run(["history", "p.yaml"] + extra, in: directory)
    }

    /// `PRAGMA integrity_check` of `.jobgraph/state.db`, read by python3's own SQLite, not jobgraph's code.
    func integrityCheck() async -> String {
        await python("""
            import sqlite3, sys
            connection = sqlite3.connect(sys.argv[1])
            print("\\n".join(row[0] for row in connection.execute("PRAGMA integrity_check")))
            """, arguments: [directory.file(".jobgraph/state.db")])
    }

    /// What a python3 `script` prints, run with `arguments`, without surrounding white space.
    func python(_ script: String, arguments: [String]) async -> String {
        await ExternalProgram.python(script, arguments)
    }

    /// Removes the folder.
    func remove() { directory.remove() }

    static func events(in text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { line in
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]  // a torn last line is no event
        }
    }
}

/// One finished `jobgraph run` and the transitions it reported.
struct RunResult {
    var outcome: JobGraphBinary.Outcome
    var events: [[String: Any]]

    var status: Int32 { outcome.status }

    /// Every task's last state.
    var finalStates: [String: String] { Self.finalStates(in: events) }

    /// Every task's last state in `events`.
    static func finalStates(in events: [[String: Any]]) -> [String: String] {
        var states: [String: String] = [:]
        for event in events {
            if let task = event["task"] as? String, let state = event["to"] as? String { states[task] = state }
        }
        return states
    }

    /// The tasks that really executed: they ended succeeded or failed, not up-to-date.
    var executed: Set<String> {
        Set(finalStates.filter { $0.value == "succeeded" || $0.value == "failed" }.keys)
    }

    /// The tasks found up to date.
    var upToDate: Set<String> {
        Set(finalStates.filter { $0.value == "up-to-date" }.keys)
    }

    /// Tasks in the order they went to `executing` (each retry again).
    var executionOrder: [String] {
        events.filter { $0["to"] as? String == "executing" }.compactMap { $0["task"] as? String }
    }
}

/// A count shared across a test's runs.
final class Counter: Sendable {
    private let value = Mutex(0)

    /// Adds one and returns the new count.
    func increment() -> Int {
        value.withLock { value in
            value += 1
            return value
        }
    }
}
