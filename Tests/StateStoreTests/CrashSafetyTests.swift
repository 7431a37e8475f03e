import Foundation
import Glibc
import Testing
@testable import StateStore

/// `kill -9` at any moment leaves a database the next run opens and trusts (contract: "Killing `jobgraph`
/// at any moment never corrupts it"). A second SQLite writer in Python stands in for a jobgraph process
/// killed mid-write: it writes this schema with the same transactions, then dies by SIGKILL.
@Suite(.enabled(if: python3 != nil, "needs python3 with its sqlite3 module"))
struct CrashSafetyTests {
    let start = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func aWriterKilledMidTransactionLeavesNoTraceOfIt() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = directory.path + "/.jobgraph/state.db"
        do {
            let store = try StateStore.open(directory: directory.path)
            let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: start, taskCount: 1)
            try store.recordTask(TaskRecord(task: "build", state: .succeeded, attempts: 1, duration: 2), run: run)
            try store.finishRun(run, outcome: .succeeded, endTime: start + 3)
        }
        // A tiny page cache makes SQLite spill the open transaction's pages into the WAL before the kill,
        // so recovery really has uncommitted frames to discard.
        let script = """
            import os, signal, sqlite3, sys
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("PRAGMA cache_size = 10")
            db.execute("BEGIN IMMEDIATE")
            run = db.execute("INSERT INTO runs (pipeline, started_at, task_count) VALUES ('ci.yaml', 2e9, 5000)").lastrowid
            for i in range(5000):
                db.execute("INSERT INTO task_runs (run_id, task, state, attempts, definition) VALUES (?, ?, 'succeeded', 1, ?)",
                           (run, "t%d" % i, "x" * 200))
            db.execute("UPDATE runs SET outcome = 'failed' WHERE id = 1")
            sys.stdout.write("spilled %d\\n" % os.path.getsize(sys.argv[1] + "-wal"))
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)
            """
        let writer = try Child(try #require(python3), ["-c", script, database])
        let spilled = try #require(await writer.readLine())
        let walBytes = Int(spilled.split(separator: " ").last ?? "") ?? 0
        #expect(walBytes > 100_000, "the uncommitted transaction should have reached the WAL: \(spilled)")
        #expect(await writer.wait() == SIGKILL)
        #expect(writer.process.terminationReason == .uncaughtSignal)

        let reopened = try StateStore.open(directory: directory.path)
        #expect(try reopened.integrityCheck() == ["ok"])
        let runs = try reopened.recentRuns()
        #expect(runs.map(\.id.rawValue) == [1])
        #expect(runs.first?.outcome == .succeeded)
        #expect(try reopened.tasks(of: RunID(1)).map(\.task) == ["build"])
        // And it is writable again.
        let next = try reopened.beginRun(pipelineFile: "ci.yaml", startTime: start + 60, taskCount: 1)
        #expect(next.rawValue == 2)
    }

    @Test func aWriterKilledBetweenTransactionsLeavesWholeTaskRecords() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = directory.path + "/.jobgraph/state.db"
        do { _ = try StateStore.open(directory: directory.path) }
        // The store's own transactions, over and over: a run begins, then each task's history row and its
        // fingerprint commit together, until the kill lands somewhere in the middle of one.
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("BEGIN IMMEDIATE")
            run = db.execute("INSERT INTO runs (pipeline, started_at, task_count) VALUES ('ci.yaml', 1.7e9, 1000000)").lastrowid
            db.execute("COMMIT")
            print("begun", flush=True)
            i = 0
            while True:
                task = "t%d" % i
                db.execute("BEGIN IMMEDIATE")
                db.execute("INSERT INTO task_runs (run_id, task, state, attempts, duration, exit_code, definition) "
                           "VALUES (?, ?, 'succeeded', 1, 0.5, 0, 'd')", (run, task))
                db.execute("INSERT INTO task_fingerprints (task, definition, succeeded) VALUES (?, 'd', 1)", (task,))
                db.execute("INSERT INTO task_inputs (task, path, sha256) VALUES (?, ?, 'h')", (task, "src/%s.c" % task))
                db.execute("COMMIT")
                i += 1
                if i == 10:
                    print("committed", flush=True)
            """
        let writer = try Child(try #require(python3), ["-c", script, database])
        try #require(await writer.readLine() == "begun")
        try #require(await writer.readLine() == "committed")
        kill(writer.pid, SIGKILL)
        #expect(await writer.wait() == SIGKILL)

        let reopened = try StateStore.open(directory: directory.path)
        #expect(try reopened.integrityCheck() == ["ok"])
        let counts = try reopened.withDatabase { database throws(SQLiteError) in
            try database.query("""
                SELECT (SELECT count(*) FROM task_runs), (SELECT count(*) FROM task_fingerprints), (SELECT count(*) FROM task_inputs)
                """) { [$0.integer(0), $0.integer(1), $0.integer(2)] }.first ?? []
        }
        #expect(counts.count == 3 && counts[0] > 0, "some transactions should have committed: \(counts)")
        #expect(Set(counts).count == 1, "every task's rows commit together: \(counts)")
        let run = try #require(try reopened.recentRuns().first)
        #expect(run.outcome == .interrupted)
        #expect(run.tasks.succeeded == Int(counts[0]))
    }
}
