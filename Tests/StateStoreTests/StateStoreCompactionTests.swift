import Foundation
import PipelineModel
import Testing
@testable import StateStore

/// `state.db` gives back the space of dropped history once it is most of the file: a user sees the file
/// shrink, and nothing it still holds go missing.
@Suite struct StateStoreCompactionTests {
    let start = Date(timeIntervalSince1970: 1_700_000_000)

    /// A run of `count` tasks with long definitions, so that a few thousand rows fill megabytes.
    private func recordRun(_ store: StateStore, count: Int, offset: Double) throws -> RunID {
        let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: start + offset, taskCount: count)
        try store.record((0..<count).map { index in
            .ended(TaskRecord(task: TaskID("task-\(index)"), state: .failed, attempts: 1, duration: 1, exitCode: 1,
                              definition: String(repeating: "\(index % 10)", count: 400)), fingerprints: nil)
        }, run: run)
        try store.finishRun(run, outcome: .failed, endTime: start + offset + 1)
        return run
    }

    private func fileSize(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
    }

    private func autoVacuum(_ store: StateStore) throws -> Int {
        try store.withDatabase { database throws(SQLiteError) in Int(try database.query("PRAGMA auto_vacuum") { $0.integer(0) }.first ?? -1) }
    }

    @Test func theSpaceOfDroppedRunsGoesBackOnceItIsMostOfTheFile() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let path = StateStore.databasePath(inPipelineDirectory: folder.path)
        var kept: RunID?
        var compaction: StateStore.Compaction?
        do {
            // One run kept: the second run's start drops the first one's 2,000 rows.
            let store = try StateStore.open(directory: folder.path, retainedRuns: 1)
            #expect(try autoVacuum(store) == StateStore.incrementalVacuum)
            _ = try recordRun(store, count: 2_000, offset: 0)
            #expect(try store.compactIfMostlyFree(threshold: 64 << 10) == nil)  // nothing free yet
            kept = try recordRun(store, count: 10, offset: 60)
            compaction = try store.compactIfMostlyFree(threshold: 64 << 10)
        }
        let result = try #require(compaction)
        #expect(result.bytesBefore > 800_000)
        #expect(result.bytesAfter * 10 < result.bytesBefore)
        // Closed: the log is folded into the file, which is now as small as the compaction said.
        #expect(fileSize(path) <= result.bytesAfter)
        let reopened = try StateStore.open(directory: folder.path, retainedRuns: 1)
        #expect(try reopened.integrityCheck() == ["ok"])
        #expect(try reopened.recentRuns(pipelineFile: "ci.yaml").map(\.id) == [try #require(kept)])
        #expect(try reopened.tasks(of: try #require(kept)).count == 10)
    }

    @Test func aFileWithLittleFreeSpaceIsLeftAsItIs() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try StateStore.open(directory: folder.path, retainedRuns: 5)
        _ = try recordRun(store, count: 2_000, offset: 0)
        _ = try recordRun(store, count: 2_000, offset: 60)
        // Free pages below half the file, or below the threshold, stay for the next runs to reuse.
        #expect(try store.compactIfMostlyFree(threshold: 64 << 10) == nil)
        #expect(try store.compactIfMostlyFree() == nil)
    }

    @Test func aFileFromBeforeIncrementalVacuumIsRewrittenOnceAndKeepsIt() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try StateStore.open(directory: folder.path, retainedRuns: 1)
        // As an older jobgraph made it: no auto_vacuum, which only a VACUUM can change.
        try store.withDatabase { database throws(SQLiteError) in try database.execute("PRAGMA auto_vacuum = NONE; VACUUM") }
        #expect(try autoVacuum(store) == 0)
        _ = try recordRun(store, count: 2_000, offset: 0)
        let kept = try recordRun(store, count: 10, offset: 60)
        let result = try #require(try store.compactIfMostlyFree(threshold: 64 << 10))
        #expect(result.bytesAfter * 10 < result.bytesBefore)
        #expect(try autoVacuum(store) == StateStore.incrementalVacuum)
        #expect(try store.tasks(of: kept).count == 10)
        #expect(try store.integrityCheck() == ["ok"])
    }
}
