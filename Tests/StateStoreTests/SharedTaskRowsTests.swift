import Execution
import Foundation
import PipelineModel
import Testing
@testable import StateStore

/// A run that finds every task up to date, as the run before it did, shares that run's rows
/// (`SharedTaskRows`, `TaskRowSharing`, `StateStore+SharedRows`).
@Suite struct SharedTaskRowsTests {
    let start = Date(timeIntervalSince1970: 1_700_000_000)

    static func upToDate(_ task: TaskID) -> HistoryWrite {
        .ended(TaskRecord(task: task, state: .upToDate, attempts: 0), fingerprints: nil)
    }

    /// Records a finished run of `ci.yaml` whose tasks ended as given.
    @discardableResult
    func recordRun(_ store: StateStore, _ states: [TaskID: TaskState]) throws -> RunID {
        let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: start, taskCount: states.count)
        try store.record(states.sorted { $0.key < $1.key }.map { task, state in
            .ended(TaskRecord(task: task, state: state, attempts: state == .upToDate ? 0 : 1), fingerprints: nil)
        }, run: run)
        try store.finishRun(run, outcome: .succeeded, endTime: start + 1)
        return run
    }

    @Test func upToDateVerdictsOnTheSourcesTasksAreHeldBackAndTheDropOfOldRunsIsNot() {
        var sharing = TaskRowSharing()
        let source = SharedTaskRows(source: RunID(3), tasks: ["a", "b"])
        let passed = sharing.passOn([.dropOldRuns(pipelineFile: "ci.yaml"), Self.upToDate("a"), Self.upToDate("b")]) { source }
        #expect(passed == [.dropOldRuns(pipelineFile: "ci.yaml")])
        let held = sharing.take()
        #expect(held?.matchesSource == true)
        #expect(held?.held.map(\.task) == ["a", "b"])
        #expect(sharing.take() == nil)
    }

    @Test(arguments: [
        HistoryWrite.started("b"),
        .ended(TaskRecord(task: "b", state: .succeeded, attempts: 1), fingerprints: nil),
        SharedTaskRowsTests.upToDate("a"),  // the same task twice
        SharedTaskRowsTests.upToDate("z"),  // not a task of the source
    ])
    func anythingElseWritesWhatWasHeldFirstAndEndsTheSharing(_ breaking: HistoryWrite) {
        var sharing = TaskRowSharing()
        let source = SharedTaskRows(source: RunID(3), tasks: ["a", "b", "c"])
        #expect(sharing.passOn([Self.upToDate("a")]) { source }.isEmpty)
        #expect(sharing.passOn([breaking, Self.upToDate("c")]) { source } == [Self.upToDate("a"), breaking, Self.upToDate("c")])
        #expect(sharing.take() == nil)
    }

    @Test func aRunWhoseFirstRowIsNotAnUpToDateVerdictLooksForNoRowsToShare() {
        var sharing = TaskRowSharing()
        var lookups = 0
        let rows: [HistoryWrite] = [.started("a"), Self.upToDate("b")]
        #expect(sharing.passOn(rows) { lookups += 1; return SharedTaskRows(source: RunID(1), tasks: ["b"]) } == rows)
        #expect(lookups == 0)
    }

    @Test func theRowsToShareAreThoseOfTheRunHoldingThePreviousRunsRowsWhenEveryTaskWasUpToDate() throws {
        let store = try StateStore.inMemory(directory: "/project")
        try recordRun(store, ["a": .succeeded, "b": .succeeded])
        let checked = try recordRun(store, ["a": .upToDate, "b": .upToDate])
        let sharing = try store.beginRun(pipelineFile: "ci.yaml", startTime: start, taskCount: 2)
        let found = try #require(try store.upToDateRowsToShare(before: sharing, pipelineFile: "ci.yaml", taskCount: 2))
        #expect(found.source == checked)
        #expect(try store.shareRows(of: checked, with: sharing))
        #expect(try store.tasks(of: sharing) == store.tasks(of: checked))

        // The run after one that shares finds the rows of the run that holds them.
        let next = try store.beginRun(pipelineFile: "ci.yaml", startTime: start, taskCount: 2)
        #expect(try store.upToDateRowsToShare(before: next, pipelineFile: "ci.yaml", taskCount: 2)?.source == checked)
        // Another number of tasks, or another pipeline, shares nothing.
        #expect(try store.upToDateRowsToShare(before: next, pipelineFile: "ci.yaml", taskCount: 3) == nil)
        #expect(try store.upToDateRowsToShare(before: next, pipelineFile: "other.yaml", taskCount: 2) == nil)
    }

    /// Through `RunRecorder`, as a run records: the first run finding `build` up to date has its row,
    /// the later ones share it; the run holding it stays while a kept run shares it (docs/state.md).
    @Test func runsFindingEveryTaskUpToDateShareTheRowOfTheFirstAndKeepItBeyondTheRetainedCount() throws {
        let store = try StateStore.inMemory(directory: "/project", retainedRuns: 2)
        for index in 0..<4 {
            let recorder = try RunRecorder(store: store, pipelineFile: "ci.yaml", pipelineDirectory: "/project", taskCount: 1,
                                           startTime: start + Double(index))
            recorder.ended("build", state: .upToDate, attempts: 0, duration: nil, exitCode: nil, answer: nil)
            let summary = RunSummary(counts: [.upToDate: 1], wallTime: 0.1, criticalPath: [], failures: [], stop: nil)
            #expect(recorder.finish(summary, endTime: start + Double(index) + 1).isEmpty)
        }
        #expect(try store.recentRuns(pipelineFile: "ci.yaml").map(\.id.rawValue) == [4, 3, 1])
        #expect(try store.recentRuns(pipelineFile: "ci.yaml").map(\.tasks) == Array(repeating: TaskStateCounts(upToDate: 1), count: 3))
        let rows = try store.withDatabase { database throws(SQLiteError) in
            try database.query("SELECT run_id FROM task_runs") { $0.integer(0) }
        }
        #expect(rows == [1])
    }

    @Test func aPreviousRunThatExecutedATaskHasNoRowsToShare() throws {
        let store = try StateStore.inMemory(directory: "/project")
        try recordRun(store, ["a": .upToDate, "b": .succeeded])
        let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: start, taskCount: 2)
        #expect(try store.upToDateRowsToShare(before: run, pipelineFile: "ci.yaml", taskCount: 2) == nil)
    }

    @Test func rowsOfARunDroppedSinceAreNotShared() throws {
        let store = try StateStore.inMemory(directory: "/project", retainedRuns: 1)
        let checked = try recordRun(store, ["a": .upToDate])
        let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: start, taskCount: 1)  // drops `checked`
        #expect(try store.shareRows(of: checked, with: run) == false)
        #expect(try store.tasks(of: run).isEmpty)
    }
}
