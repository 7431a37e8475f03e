import Foundation
import Glibc
import Testing
@testable import StateStore

/// `state.db.checked`: a file a run finished writing and closed is trusted at the next open without
/// `PRAGMA quick_check`; any other change to it, even one that keeps its size and modification time,
/// sends it through the check again, and a damaged file is still moved aside.
struct StateFileSealTests {
    let start = Date(timeIntervalSince1970: 1_700_000_000)

    /// Opens the store in `directory`, records a run of one task, and closes it (the store is released).
    private func recordRun(in directory: TemporaryDirectory, finishing: Bool = true) throws {
        let store = try StateStore.open(directory: directory.path)
        let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: start, taskCount: 1)
        try store.recordTask(TaskRecord(task: "build", state: .succeeded, attempts: 1, duration: 2), run: run)
        if finishing { try store.finishRun(run, outcome: .succeeded, endTime: start + 3) }
    }

    @Test func aRunThatFinishedAndClosedSealsTheFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = directory.path + "/.jobgraph/state.db"
        try recordRun(in: directory)
        #expect(FileManager.default.fileExists(atPath: database + ".checked"))
        #expect(!FileManager.default.fileExists(atPath: database + "-wal"), "the close checkpointed the log")
        #expect(StateFileSeal.isIntact(database))
        let reopened = try StateStore.open(directory: directory.path)
        #expect(reopened.recovery == nil)
        #expect(try reopened.integrityCheck() == ["ok"])
    }

    /// `close()` seals the file however many references to the store are left: a process that exits with
    /// one held (a thread's) never releases it, and its next run checked the whole file.
    @Test func closingSealsTheFileWhileTheStoreIsStillHeld() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = directory.path + "/.jobgraph/state.db"
        let store = try StateStore.open(directory: directory.path)
        let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: start, taskCount: 1)
        try store.recordTask(TaskRecord(task: "build", state: .succeeded, attempts: 1, duration: 2), run: run)
        try store.finishRun(run, outcome: .succeeded, endTime: start + 3)
        store.close()
        #expect(StateFileSeal.isIntact(database))
        #expect(throws: SQLiteError.closed) { try store.tasks(of: run) }
        withExtendedLifetime(store) {}
    }

    @Test func aRunThatDidNotFinishLeavesNoValidSeal() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = directory.path + "/.jobgraph/state.db"
        try recordRun(in: directory)
        #expect(StateFileSeal.isIntact(database))
        try recordRun(in: directory, finishing: false)
        #expect(!StateFileSeal.isIntact(database), "the unfinished run wrote the file after the seal")
    }

    @Test(.enabled(if: python3 != nil, "needs python3"))
    func damageThatKeepsSizeAndModificationTimeIsStillFound() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = directory.path + "/.jobgraph/state.db"
        try recordRun(in: directory)
        #expect(StateFileSeal.isIntact(database))
        // The tables' root pages overwritten in place, and the modification time put back to the nanosecond:
        // only the change time, which no program can set, tells.
        let script = """
            import os, sys
            path = sys.argv[1]
            before = os.stat(path)
            with open(path, "r+b") as f:
                f.seek(2 * 4096)
                f.write(b"\\xa5" * (2 * 4096))
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
            after = os.stat(path)
            assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
            """
        #expect(await runToEnd(try #require(python3), ["-c", script, database]) == 0)
        #expect(!StateFileSeal.isIntact(database))
        let reopened = try StateStore.open(directory: directory.path)
        let recovery = try #require(reopened.recovery, "the damaged file was checked and moved aside")
        #expect(recovery.movedTo.hasPrefix(database + ".corrupt-"))
    }
}
