import Execution
import Foundation
import PipelineModel
import Testing
@testable import StateStore

/// What `jobgraph report` reads back: each attempt's times, lane and outcome, a failure's log tail, the
/// run's jobs and critical path; and a state file from before attempts were kept, brought forward.
@Suite struct StateStoreAttemptsTests {
    let start = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func attemptsOfARunComeBackAsRecorded() throws {
        let store = try StateStore.inMemory(directory: "/project")
        let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: start, taskCount: 2)
        try store.recordTask(TaskRecord(task: "build", state: .succeeded, attempts: 1, duration: 1.5, exitCode: 0), run: run)
        try store.recordTask(TaskRecord(task: "test", state: .failed, attempts: 2, duration: 0.5, exitCode: 2), run: run)
        let attempts = [
            TaskAttempt(task: "build", attempt: 1, queue: "default", slot: 0, start: 0, end: 1.5, outcome: .succeeded, exitCode: 0),
            TaskAttempt(task: "test", attempt: 1, queue: "tests", slot: 1, start: 0.25, end: 0.75, outcome: .failed, exitCode: 2,
                        error: "exit status 2; retrying"),
            TaskAttempt(task: "test", attempt: 2, queue: "tests", slot: 0, start: 1.5, end: 2, outcome: .failed, exitCode: 2,
                        error: "exit status 2", logTail: ["first line", "", "last line"]),
        ]
        try store.recordAttempts(attempts, run: run, jobs: 2, criticalPath: ["build", "test"])
        try store.finishRun(run, outcome: .failed, endTime: start + 2)

        let timeline = try #require(try store.runTimeline(pipelineFile: "ci.yaml"))
        #expect(timeline.run.id == run)
        #expect(timeline.jobs == 2)
        #expect(timeline.criticalPath == ["build", "test"])
        #expect(timeline.attempts == attempts)
        #expect(timeline.tasks.map(\.state) == [.succeeded, .failed])
        #expect(try store.runTimeline(pipelineFile: "ci.yaml", run: RunID(run.rawValue + 1)) == nil)
        #expect(try store.runTimeline(pipelineFile: "other.yaml") == nil)
    }

    @Test func aRunsResourceTotalsAndWhatEachAttemptHeldComeBackAsRecorded() throws {
        let store = try StateStore.inMemory(directory: "/project")
        let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: start, taskCount: 1)
        let totals = [ResourceTotal(name: "cpus", total: 2, source: .jobs), ResourceTotal(name: "mem", total: 12 << 30, source: .option),
                      ResourceTotal(name: "gpus", total: 1, source: .file), ResourceTotal(name: "licences", total: 3, source: nil)]
        let attempts = [
            TaskAttempt(task: "align", attempt: 1, queue: "default", slot: 0, start: 0, end: 1, outcome: .failed, exitCode: 75,
                        resources: Resources([.init(name: "cpus", value: 1), .init(name: "mem", value: 4 << 30)])),
            TaskAttempt(task: "align", attempt: 2, queue: "default", slot: 0, start: 1, end: 2, outcome: .succeeded, exitCode: 0,
                        resources: Resources([.init(name: "cpus", value: 2), .init(name: "mem", value: 8 << 30)])),
            TaskAttempt(task: "other", attempt: 1, queue: "default", slot: 1, start: 0, end: 2, outcome: .succeeded, exitCode: 0),
        ]
        try store.recordAttempts(attempts, run: run, jobs: 2, criticalPath: ["align"], resources: totals)
        let timeline = try #require(try store.runTimeline(pipelineFile: "ci.yaml"))
        #expect(timeline.resources == totals)
        #expect(timeline.attempts == [attempts[0], attempts[2], attempts[1]], "in the order they started")

        // A run of a pipeline that declares none keeps none.
        let plain = try store.beginRun(pipelineFile: "ci.yaml", startTime: start + 5, taskCount: 1)
        try store.recordAttempts([attempts[2]], run: plain, jobs: 2, criticalPath: [])
        #expect(try store.runTimeline(pipelineFile: "ci.yaml", run: plain)?.resources == nil)
    }

    @Test func aVersion10StateFileGainsResourcesAndItsRunsShowNone() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path + "/.jobgraph", withIntermediateDirectories: true)
        do {  // the file as jobgraph with schema 10 left it
            let old = try SQLiteDatabase(location: .path(directory.path + "/.jobgraph/state.db"))
            for step in 0..<10 { try old.execute(StateSchema.migrations[step]) }
            try old.setUserVersion(10)
            try old.run("INSERT INTO runs (pipeline, started_at, ended_at, outcome, task_count, jobs) VALUES ('ci.yaml', 1.0, 3.0, 'succeeded', 1, 2)")
            try old.run("INSERT INTO task_runs (run_id, task, state, attempts, duration) VALUES (1, 'build', 'succeeded', 1, 2.0)")
            try old.run("""
                INSERT INTO task_attempts (run_id, task, attempt, queue, slot, started, ended, outcome)
                VALUES (1, 'build', 1, 'default', 0, 0.0, 2.0, 'succeeded')
                """)
        }
        let store = try StateStore.open(directory: directory.path)
        #expect(try store.withDatabase { database throws(SQLiteError) in try database.userVersion() } == StateSchema.currentVersion)
        let old = try #require(try store.runTimeline(pipelineFile: "ci.yaml"))
        #expect(old.resources == nil)
        #expect(old.attempts.map(\.resources) == [nil])
        #expect(old.attempts.map(\.task) == ["build"])
    }

    @Test func aVersion1StateFileIsMigratedAndKeepsItsHistory() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path + "/.jobgraph", withIntermediateDirectories: true)
        do {  // the file as the previous version of jobgraph left it
            let old = try SQLiteDatabase(location: .path(directory.path + "/.jobgraph/state.db"))
            try old.execute(StateSchema.migrations[0])
            try old.setUserVersion(1)
            try old.run("INSERT INTO runs (pipeline, started_at, ended_at, outcome, task_count) VALUES ('ci.yaml', 1.0, 3.0, 'succeeded', 1)")
            try old.run("INSERT INTO task_runs (run_id, task, state, attempts, duration) VALUES (1, 'build', 'succeeded', 1, 2.0)")
        }

        let store = try StateStore.open(directory: directory.path)
        #expect(try store.withDatabase { database throws(SQLiteError) in try database.userVersion() } == StateSchema.currentVersion)
        let old = try #require(try store.runTimeline(pipelineFile: "ci.yaml"))
        #expect(old.run.outcome == .succeeded)
        #expect(old.tasks.map(\.task) == ["build"])
        #expect(old.jobs == nil)
        #expect(old.attempts.isEmpty)

        let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: start, taskCount: 1)
        try store.recordAttempts([TaskAttempt(task: "build", attempt: 1, queue: "default", slot: 0, start: 0, end: 1, outcome: .succeeded)],
                                 run: run, jobs: 3, criticalPath: ["build"])
        #expect(try store.runTimeline(pipelineFile: "ci.yaml")?.jobs == 3)
        #expect(try store.runTimeline(pipelineFile: "ci.yaml", run: RunID(1))?.attempts.isEmpty == true)
    }
}
