import Execution
import Foundation
import PipelineModel
import Testing
@testable import StateStore

@Suite struct StateStoreHistoryTests {
    let start = Date(timeIntervalSince1970: 1_700_000_000)

    /// Records one finished run of `ci.yaml` whose tasks ended as given.
    @discardableResult
    func recordRun(_ store: StateStore, _ tasks: [TaskRecord], outcome: RunOutcome = .succeeded, offset: Double = 0,
                   pipeline: String = "ci.yaml") throws -> RunID {
        let run = try store.beginRun(pipelineFile: pipeline, startTime: start + offset, taskCount: tasks.count)
        for task in tasks {
            if task.attempts > 0 { try store.recordTaskStarted(task.task, run: run) }
            try store.recordTask(task, run: run)
        }
        try store.finishRun(run, outcome: outcome, endTime: start + offset + 10)
        return run
    }

    @Test func eachTaskAndEachRunHasItsRow() throws {
        let store = try StateStore.inMemory(directory: "/project")
        let first = try recordRun(store, [
            TaskRecord(task: "build", state: .succeeded, attempts: 1, duration: 4.5, exitCode: 0, definition: "d1"),
            TaskRecord(task: "test", state: .failed, attempts: 3, duration: 1.25, exitCode: 2, definition: "d2"),
            TaskRecord(task: "deploy", state: .skipped, attempts: 0),
        ], outcome: .failed)
        let second = try recordRun(store, [TaskRecord(task: "build", state: .upToDate, attempts: 0)], offset: 60)

        #expect(try store.tasks(of: first) == [
            TaskRecord(task: "build", state: .succeeded, attempts: 1, duration: 4.5, exitCode: 0, definition: "d1"),
            TaskRecord(task: "deploy", state: .skipped, attempts: 0),
            TaskRecord(task: "test", state: .failed, attempts: 3, duration: 1.25, exitCode: 2, definition: "d2"),
        ])
        let runs = try store.recentRuns(pipelineFile: "ci.yaml")
        #expect(runs.map(\.id) == [second, first])
        #expect(runs.map(\.outcome) == [.succeeded, .failed])
        #expect(runs[1].startedAt == start)
        #expect(runs[1].endedAt == start + 10)
        #expect(runs[1].taskCount == 3)
        #expect(runs[1].tasks == TaskStateCounts(succeeded: 1, failed: 1, skipped: 1))
        #expect(runs[0].tasks == TaskStateCounts(upToDate: 1))
    }

    @Test func aBatchOfWritesLandsInOrderInOneGo() throws {
        let store = try StateStore.inMemory(directory: "/project")
        let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: start, taskCount: 3)
        let built = TaskRecord(task: "build", state: .succeeded, attempts: 1, duration: 2, exitCode: 0, definition: "d1")
        try store.record([
            .started("build"),
            .started("test"),
            .ended(built, fingerprints: TaskFingerprints(definition: "d1", inputs: [])),
            .ended(TaskRecord(task: "lint", state: .upToDate, attempts: 0), fingerprints: nil),
        ], run: run)
        // A start written before its end must not overwrite it; a start without an end stays `executing`.
        #expect(try store.tasks(of: run).map(\.state) == [.succeeded, .upToDate, .executing])
        #expect(try store.tasks(of: run).first == built)
    }

    @Test func aStartWhoseEndFollowsInTheBatchLeavesWhatSeparateCommitsWould() throws {
        let fingerprints = TaskFingerprints(definition: "d1", inputs: [])
        let writes: [HistoryWrite] = [
            .started("kept"), .started("fails"), .started("bare"),
            .ended(TaskRecord(task: "kept", state: .succeeded, attempts: 1, duration: 1, exitCode: 0, definition: "d1"), fingerprints: fingerprints),
            .ended(TaskRecord(task: "fails", state: .failed, attempts: 1, duration: 1, exitCode: 1), fingerprints: nil),
            // A success with no fingerprints stores none, and leaves no earlier one trusted.
            .ended(TaskRecord(task: "bare", state: .succeeded, attempts: 1, duration: 1, exitCode: 0), fingerprints: nil),
            .started("running"),
        ]
        #expect(StateStore.startsOvertaken(in: writes) == [0, 1, 2])

        func outcome(batched: Bool) throws -> (rows: [String], trusted: [String]) {
            let store = try StateStore.inMemory(directory: "/project")
            for task: TaskID in ["kept", "fails", "bare", "running"] {
                try store.recordSuccess(task, fingerprints: TaskFingerprints(definition: "d0", inputs: []))
            }
            let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: start, taskCount: 4)
            if batched { try store.record(writes, run: run) } else { for write in writes { try store.record([write], run: run) } }
            let trusted = try store.withDatabase { database throws(SQLiteError) in
                try database.query("SELECT task || ':' || definition FROM task_fingerprints WHERE succeeded = 1 ORDER BY task") { $0.text(0) }
            }
            return (try store.tasks(of: run).map { "\($0.task):\($0.state.rawValue)" }, trusted)
        }
        let batched = try outcome(batched: true)
        let separate = try outcome(batched: false)
        #expect(batched.rows == separate.rows)
        #expect(batched.trusted == separate.trusted)
        #expect(batched.trusted == ["kept:d1"])
        #expect(batched.rows == ["bare:succeeded", "fails:failed", "kept:succeeded", "running:executing"])
    }

    @Test func aRunThatNeverFinishedReadsAsInterrupted() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try StateStore.open(directory: directory.path)
        let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: start, taskCount: 3)
        try store.recordTaskStarted("build", run: run)
        try store.recordTask(TaskRecord(task: "build", state: .succeeded, attempts: 1, duration: 1), run: run)
        try store.recordTaskStarted("test", run: run)
        // No finishRun: the process died here.

        let runs = try store.recentRuns()
        #expect(runs.map(\.outcome) == [.interrupted])
        #expect(runs[0].endedAt == nil)
        #expect(runs[0].duration == nil)
        #expect(runs[0].tasks == TaskStateCounts(succeeded: 1, unfinished: 2))
        #expect(try store.tasks(of: run).map(\.state) == [.succeeded, .executing])

        // The next run closes it for good.
        _ = try store.beginRun(pipelineFile: "ci.yaml", startTime: start + 60, taskCount: 1)
        let outcome = try store.withDatabase { database throws(SQLiteError) in
            try database.query("SELECT outcome FROM runs WHERE id = ?1", [.integer(run.rawValue)]) { $0.optionalText(0) }
        }
        #expect(outcome == ["interrupted"])
    }

    @Test func anUnfinishedRunWhoseLockHolderLivesReadsAsRunning() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try StateStore.open(directory: directory.path)
        let lock = try store.acquireRunLock(for: "ci.yaml")
        _ = try store.beginRun(pipelineFile: "ci.yaml", startTime: start, taskCount: 1)
        #expect(try store.recentRuns().map(\.outcome) == [.running])
        lock.release()
        #expect(try store.recentRuns().map(\.outcome) == [.interrupted])
    }

    /// With hundreds of other locks on the machine, and other tests taking and releasing theirs meanwhile,
    /// the holder is still found: `/proc/locks`, read a page at a time, stopped after its first page and
    /// later skipped lines that moved while it was read (the fresh-clone CI at 1b397b0).
    @Test func theHolderIsFoundAmongManyOtherLocks() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try StateStore.open(directory: directory.path)
        let lock = try store.acquireRunLock(for: "ci.yaml")
        defer { lock.release() }
        _ = try store.beginRun(pipelineFile: "ci.yaml", startTime: start, taskCount: 1)
        // Taken after the run's: the kernel lists the newest first, so these come before the holder's line.
        var others: [Int32] = []
        defer { for descriptor in others { close(descriptor) } }
        for number in 0..<300 {
            let descriptor = open(directory.path + "/other-\(number)", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            try #require(descriptor >= 0 && flock(descriptor, LOCK_EX) == 0)
            others.append(descriptor)
        }
        #expect(try store.recentRuns().map(\.outcome) == [.running])
    }

    @Test func anUnfinishedRunWhosePidNowNamesAnotherProcessReadsAsInterrupted() throws {
        // A run killed with SIGKILL leaves its pid in the lock file; once pids wrap, a living process that
        // holds no lock may have it. Here that process is this one.
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try StateStore.open(directory: directory.path)
        _ = try store.beginRun(pipelineFile: "ci.yaml", startTime: start, taskCount: 1)
        try "\(getpid())\n".write(toFile: store.lockPath(for: "ci.yaml"), atomically: false, encoding: .utf8)
        #expect(try store.recentRuns().map(\.outcome) == [.interrupted])
    }

    @Test func runsAreKeptPerPipelineUpToTheRetainedCount() throws {
        let store = try StateStore.inMemory(directory: "/project", retainedRuns: 3)
        for index in 0..<5 {
            try recordRun(store, [TaskRecord(task: "build", state: .succeeded, attempts: 1, duration: Double(index))], offset: Double(index))
        }
        try recordRun(store, [TaskRecord(task: "lint", state: .succeeded, attempts: 1, duration: 1)], pipeline: "other.yaml")
        #expect(try store.recentRuns(pipelineFile: "ci.yaml").map(\.id.rawValue) == [5, 4, 3])
        #expect(try store.recentRuns(pipelineFile: "other.yaml").count == 1)
        #expect(try store.recentRuns(limit: 2).map(\.id.rawValue) == [6, 5])
        let rows = try store.withDatabase { database throws(SQLiteError) in try database.query("SELECT count(*) FROM task_runs") { $0.integer(0) } }
        #expect(rows == [4])  // the dropped runs' task rows went with them
    }

    /// A run's record drops the runs beyond the retained count on its history thread, not when it begins;
    /// by the time the run's record is finished they are gone.
    @Test func aRunsRecordDropsTheOldestRunsOnItsHistoryThread() throws {
        let store = try StateStore.inMemory(directory: "/project", retainedRuns: 2)
        for index in 0..<4 {
            let recorder = try RunRecorder(store: store, pipelineFile: "ci.yaml", pipelineDirectory: "/project", taskCount: 1,
                                           startTime: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)))
            recorder.ended("build", state: .succeeded, attempts: 1, duration: 1, exitCode: 0, answer: nil)
            let summary = RunSummary(counts: [.succeeded: 1], wallTime: 0.1, criticalPath: [], failures: [], stop: nil)
            #expect(recorder.finish(summary, endTime: Date(timeIntervalSince1970: 1_700_000_001 + Double(index))).isEmpty)
            #expect(try store.recentRuns(pipelineFile: "ci.yaml").count == min(index + 1, 2))
        }
        #expect(try store.recentRuns(pipelineFile: "ci.yaml").map(\.id.rawValue) == [4, 3])
        let rows = try store.withDatabase { database throws(SQLiteError) in try database.query("SELECT count(*) FROM task_runs") { $0.integer(0) } }
        #expect(rows == [2])
    }

    @Test func anUntrackedSuccessStoresNoFingerprintsLeavesNoEarlierSuccessTrustedAndRecordsItsDefinition() throws {
        let store = try StateStore.inMemory(directory: "/project")
        // `tidy` succeeded once while it declared outputs; now neither it nor `hello` declares any.
        try store.recordSuccess("tidy", fingerprints: TaskFingerprints(definition: "d0", inputs: []))
        let recorder = try RunRecorder(store: store, pipelineFile: "ci.yaml", pipelineDirectory: "/project", taskCount: 2,
                                       startTime: start)
        let definition = TaskDefinition(action: "run", parameters: ["echo hello"])
        let untracked = try #require(RunRecorder.untrackedAnswer(definition))
        #expect(untracked.cause == .untracked)
        for task: TaskID in ["tidy", "hello"] {
            recorder.started(task, answer: untracked)
            recorder.ended(task, state: .succeeded, attempts: 1, duration: 0.1, exitCode: 0, answer: untracked)
        }
        let summary = RunSummary(counts: [.succeeded: 2], wallTime: 0.2, criticalPath: [], failures: [], stop: nil)
        #expect(recorder.finish(summary, endTime: start + 1).isEmpty)
        let rows = try store.withDatabase { database throws(SQLiteError) in
            try database.query("SELECT task || ':' || succeeded FROM task_fingerprints ORDER BY task") { $0.text(0) }
        }
        #expect(rows == ["tidy:0"])
        let records = try store.tasks(of: try #require(store.recentRuns().first?.id))
        #expect(records.map(\.state) == [.succeeded, .succeeded])
        // Hashed on the history thread, the row still carries the definition's fingerprint, which tells a
        // flaky task from an edited one.
        #expect(records.map(\.definition) == [definition.fingerprint, definition.fingerprint])
    }

    /// The Runner checks a task on the event loop's thread only when the check reads neither the store nor a
    /// file, and starts it there only when its start commits nothing: so for an untracked task, never for one
    /// that declares a path.
    @Test func onlyAnUntrackedTaskIsCheckedAndStartedWithoutReadingOrCommitting() throws {
        let store = try StateStore.inMemory(directory: "/project")
        let recorder = try RunRecorder(store: store, pipelineFile: "ci.yaml", pipelineDirectory: "/project", taskCount: 1,
                                       startTime: start)
        #expect(!recorder.checkReads(inputs: [], outputs: []))
        #expect(recorder.checkReads(inputs: ["a.c"], outputs: []))
        #expect(recorder.checkReads(inputs: [], outputs: ["a.o"]))
        let work = TaskWork(id: "hello", attempt: 1, work: .shell(commands: ["echo hello"], concurrently: false),
                            workingDirectory: "/project", environment: [:], niceness: 0, timeout: nil, logPath: "/project/hello.log")
        let answer = recorder.check(work, inputs: [], outputs: [], environmentNames: [])
        #expect(answer.cause == .untracked)
        #expect(!recorder.startCommits(answer: answer))
    }

    @Test func mediansUseTheLatestSuccessfulExecutionsOfEachTask() throws {
        let store = try StateStore.inMemory(directory: "/project")
        for (index, seconds) in [10.0, 1, 2, 3, 100].enumerated() {
            try recordRun(store, [
                TaskRecord(task: "build", state: .succeeded, attempts: 1, duration: seconds),
                TaskRecord(task: "test", state: index == 4 ? .failed : .succeeded, attempts: 1, duration: seconds * 2),
            ], offset: Double(index))
        }
        // Up-to-date runs keep the last measured durations.
        try recordRun(store, [TaskRecord(task: "build", state: .upToDate, attempts: 0)], offset: 10)

        #expect(try store.medianDurations(pipelineFile: "ci.yaml") == ["build": 3, "test": 5])
        #expect(try store.medianDurations(pipelineFile: "ci.yaml", samples: 3) == ["build": 3, "test": 4])
        #expect(try store.medianDurations(pipelineFile: "other.yaml") == [:])
        #expect(StateStore.median([4, 1, 3, 2]) == 2.5)
    }

    @Test func slowestTasksAreOrderedByMedian() throws {
        let store = try StateStore.inMemory(directory: "/project")
        for index in 0..<3 {
            try recordRun(store, [
                TaskRecord(task: "quick", state: .succeeded, attempts: 1, duration: 0.5),
                TaskRecord(task: "slow", state: .succeeded, attempts: 1, duration: 30 + Double(index)),
                TaskRecord(task: "middle", state: .succeeded, attempts: 1, duration: 5),
                TaskRecord(task: "broken", state: .failed, attempts: 1, duration: 999),
            ], offset: Double(index))
        }
        #expect(try store.slowestTasks(pipelineFile: "ci.yaml", limit: 2) == [
            TaskTiming(task: "slow", medianDuration: 31, samples: 3),
            TaskTiming(task: "middle", medianDuration: 5, samples: 3),
        ])
    }

    @Test func flakyTasksAreRetriedOrFlipWithoutADefinitionChange() throws {
        let store = try StateStore.inMemory(directory: "/project")
        let runs: [[TaskRecord]] = [
            [TaskRecord(task: "net", state: .succeeded, attempts: 1, definition: "n"),
             TaskRecord(task: "edited", state: .failed, attempts: 1, definition: "e1"),
             TaskRecord(task: "retried", state: .succeeded, attempts: 2, definition: "r"),
             TaskRecord(task: "steady", state: .succeeded, attempts: 1, definition: "s")],
            [TaskRecord(task: "net", state: .failed, attempts: 1, definition: "n"),
             TaskRecord(task: "edited", state: .succeeded, attempts: 1, definition: "e2"),
             TaskRecord(task: "retried", state: .succeeded, attempts: 1, definition: "r"),
             TaskRecord(task: "steady", state: .succeeded, attempts: 1, definition: "s")],
            [TaskRecord(task: "net", state: .upToDate, attempts: 0, definition: "n"),
             TaskRecord(task: "steady", state: .upToDate, attempts: 0, definition: "s")],
            [TaskRecord(task: "net", state: .succeeded, attempts: 1, definition: "n")],
        ]
        for (index, tasks) in runs.enumerated() { try recordRun(store, tasks, offset: Double(index)) }

        #expect(try store.flakyTasks(pipelineFile: "ci.yaml") == [
            FlakyTask(task: "net", runs: 3, failures: 1, retriedRuns: 0, outcomeChanges: 2),
            FlakyTask(task: "retried", runs: 2, failures: 0, retriedRuns: 1, outcomeChanges: 0),
        ])
        // A window of the last two runs sees only net's last success.
        #expect(try store.flakyTasks(pipelineFile: "ci.yaml", window: 2) == [])
    }

    @Test func theReportEncodesWithSnakeCaseKeysAndISODates() throws {
        let store = try StateStore.inMemory(directory: "/project")
        try recordRun(store, [TaskRecord(task: "build", state: .succeeded, attempts: 2, duration: 1.5, definition: "d")])
        let report = try store.historyReport(pipelineFile: "/project/ci.yaml")
        let object = try #require(try JSONSerialization.jsonObject(with: report.jsonData()) as? [String: Any])
        #expect(Set(object.keys) == ["pipeline", "runs", "slowest_tasks", "flaky_tasks"])
        #expect(object["pipeline"] as? String == "ci.yaml")
        let run = try #require((object["runs"] as? [[String: Any]])?.first)
        #expect(Set(run.keys) == ["id", "pipeline", "started_at", "ended_at", "duration", "outcome", "task_count", "tasks"])
        #expect(run["started_at"] as? String == "2023-11-14T22:13:20.000Z")
        #expect(run["duration"] as? Double == 10)
        #expect(run["outcome"] as? String == "succeeded")
        #expect((run["tasks"] as? [String: Int])?["up_to_date"] == 0)
        let slow = try #require((object["slowest_tasks"] as? [[String: Any]])?.first)
        #expect(Set(slow.keys) == ["task", "median_duration", "samples"])
        let flaky = try #require((object["flaky_tasks"] as? [[String: Any]])?.first)
        #expect(Set(flaky.keys) == ["task", "runs", "failures", "retried_runs", "outcome_changes"])

        let decoded = try JSONDecoder().decode(HistoryReport.self, from: report.jsonData())
        #expect(decoded == report)
    }

    @Test func theTextReportListsRunsSlowestAndFlakyTasks() throws {
        let store = try StateStore.inMemory(directory: "/project")
        try recordRun(store, [
            TaskRecord(task: "build", state: .succeeded, attempts: 1, duration: 75, definition: "b"),
            TaskRecord(task: "test", state: .failed, attempts: 2, duration: 1.5, exitCode: 1, definition: "t"),
        ], outcome: .failed)
        let unfinished = try store.beginRun(pipelineFile: "ci.yaml", startTime: start + 3600, taskCount: 2)
        try store.recordTask(TaskRecord(task: "build", state: .upToDate, attempts: 0), run: unfinished)

        let lines = HistoryText.lines(for: try store.historyReport(pipelineFile: "ci.yaml"), timeZone: TimeZone(identifier: "UTC")!)
        #expect(lines == [
            "runs of ci.yaml, newest first",
            "  RUN  STARTED              OUTCOME      DURATION  TASKS",
            "  #2   2023-11-14 23:13:20  interrupted  -         1 unfinished, 1 up-to-date",
            "  #1   2023-11-14 22:13:20  failed       10.00s    1 failed, 1 succeeded",
            "",
            "slowest tasks (median of their latest successful runs)",
            "  build  1m15s  1 run",
            "",
            "flaky tasks (retried, or changed outcome without a change of definition)",
            "  test  retried in 1 of 1 runs; failed 1 of 1",
        ])
        let empty = HistoryReport(pipeline: "new.yaml", runs: [], slowestTasks: [], flakyTasks: [])
        #expect(HistoryText.lines(for: empty) == ["no runs of new.yaml recorded yet"])
    }

    @Test func theOutcomeOfASummary() {
        let clean = RunSummary(counts: [.succeeded: 2], wallTime: 1, criticalPath: [], failures: [], stop: nil)
        #expect(RunOutcome(summary: clean) == .succeeded)
        #expect(RunOutcome(summary: RunSummary(counts: [:], wallTime: 1, criticalPath: [], failures: [], stop: .interrupt)) == .interrupted)
    }
}
