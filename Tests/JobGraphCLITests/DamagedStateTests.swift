import Foundation
import JobGraphTestSupport
import StateStore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `.jobgraph/state.db` is a cache plus a history: a damaged one is moved aside and the run goes on with a
/// fresh one; one from a newer jobgraph is refused and left alone; a lock left by a killed run blocks
/// nothing (issue 15, "Corrupt or foreign state"). Through the binary, with files made by python3's SQLite.
@Suite struct DamagedStateTests {
    static let pipeline = """
        version: 1
        tasks:
          build:
            inputs: [src.txt]
            outputs: [out.txt]
            run: cp src.txt out.txt
        """

    private func folder() throws -> PipelineFolder {
        let folder = try PipelineFolder(Self.pipeline, prefix: "jobgraph-damaged-state")
        try folder.write("source\n", to: "src.txt")
        return folder
    }

    private func stateFile(_ folder: PipelineFolder) -> String { folder.directory.file(".jobgraph/state.db") }

    /// The files in `.jobgraph/` whose names start with `state.db.corrupt-`.
    private func setAside(_ folder: PipelineFolder) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.directory.file(".jobgraph"))
            .filter { $0.hasPrefix("state.db.corrupt-") }.sorted()
    }

    /// Runs after the damage: a warning naming both files, every task runs, the next run trusts the fresh file.
    private func expectRecovery(_ folder: PipelineFolder, reason: String, original: Data) async throws {
        let run = try await folder.run()
        #expect(run.status == 0, "\(run.outcome.standardError)")
        #expect(run.executed == ["build"])
        let moved = try setAside(folder)
        let name = try #require(moved.first { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") })
        #expect(name.wholeMatch(of: /state\.db\.corrupt-\d{8}T\d{6}Z/) != nil, "\(name)")
        let warnings = run.outcome.errorLines.filter { $0.hasPrefix("warning:") }
        #expect(warnings == ["warning: '\(stateFile(folder))' is not a usable database (\(reason)); moved it to "
            + "'\(folder.directory.file(".jobgraph/" + name))' and started a fresh one, so every task will run"])
        #expect(FileManager.default.contents(atPath: folder.directory.file(".jobgraph/" + name)) == original)
        #expect(await folder.integrityCheck() == "ok")
        let again = try await folder.run()
        #expect(again.status == 0)
        #expect(again.upToDate == ["build"])
        #expect(again.outcome.errorLines.isEmpty)
    }

    @Test func aFileThatIsNotADatabaseIsMovedAsideAndTheRunGoesOn() async throws {
        let folder = try folder()
        defer { folder.remove() }
        try folder.write(String(repeating: "this is not SQLite\n", count: 300), to: ".jobgraph/state.db")
        try folder.write("a stray log\n", to: ".jobgraph/state.db-wal")
        let original = try #require(FileManager.default.contents(atPath: stateFile(folder)))
        try await expectRecovery(folder, reason: "file is not a database", original: original)
        #expect(try setAside(folder).contains { $0.hasSuffix("-wal") }, "the log of the damaged file went with it")
    }

    @Test func aDatabaseFailingQuickCheckIsMovedAside() async throws {
        let folder = try folder()
        defer { folder.remove() }
        let first = try await folder.run()
        #expect(first.status == 0)
        // Page 3 onwards (tables' root pages) overwritten, the header and schema page left sound.
        await ExternalProgram.python("""
            import os, sqlite3, sys
            path = sys.argv[1]
            connection = sqlite3.connect(path)
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            connection.execute("PRAGMA journal_mode=DELETE")
            connection.close()
            data = bytearray(open(path, "rb").read())
            assert len(data) >= 4 * 4096, len(data)
            data[2 * 4096:4 * 4096] = b"\\xa5" * (2 * 4096)
            open(path, "wb").write(bytes(data))
            """, [stateFile(folder)])
        let original = try #require(FileManager.default.contents(atPath: stateFile(folder)))
        let run = try await folder.run()
        #expect(run.status == 0, "\(run.outcome.standardError)")
        #expect(run.executed == ["build"])
        let warning = try #require(run.outcome.errorLines.first { $0.hasPrefix("warning:") })
        #expect(warning.contains("is not a usable database (") && warning.contains("so every task will run"), "\(warning)")
        let name = try #require(try setAside(folder).first)
        #expect(FileManager.default.contents(atPath: folder.directory.file(".jobgraph/" + name)) == original)
        #expect(await folder.integrityCheck() == "ok")
    }

    @Test func aDatabaseFromANewerJobgraphIsRefusedAndLeftAlone() async throws {
        let folder = try folder()
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.directory.file(".jobgraph"), withIntermediateDirectories: true)
        await ExternalProgram.python("""
            import sqlite3, sys
            connection = sqlite3.connect(sys.argv[1])
            connection.execute("CREATE TABLE future (x)")
            connection.execute("PRAGMA user_version = 99")
            connection.commit()
            """, [stateFile(folder)])
        let original = try #require(FileManager.default.contents(atPath: stateFile(folder)))
        let run = try await folder.run()
        #expect(run.status == 2)
        #expect(run.events.isEmpty)
        #expect(run.outcome.errorLines == ["error: '\(stateFile(folder))' has schema version 99, but this jobgraph knows up to \(StateStore.schemaVersion); "
            + "a newer jobgraph wrote it: run that one, or delete the file to start afresh (it is left as it is)"])
        #expect(FileManager.default.contents(atPath: stateFile(folder)) == original)
        #expect(try setAside(folder).isEmpty)
        #expect(!folder.directory.exists(".jobgraph/state.db-wal"))
        #expect(!folder.directory.exists("out.txt"))
    }

    /// The dry run reads the state without touching it: a damaged file is left where it is, and the plan is the
    /// one the run would follow once it moved the file aside, every task running.
    @Test func theDryRunOfADamagedStateWarnsAndPlansAsAFirstRun() async throws {
        let folder = try folder()
        defer { folder.remove() }
        try folder.write(String(repeating: "this is not SQLite\n", count: 300), to: ".jobgraph/state.db")
        let original = try #require(FileManager.default.contents(atPath: stateFile(folder)))
        let dryRun = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run"], in: folder.directory)
        #expect(dryRun.status == 0, "\(dryRun.standardError)")
        #expect(dryRun.errorLines == ["warning: '\(folder.directory.path)/.jobgraph/state.db' is not a usable database "
            + "(file is not a database); a run would move it aside and start a fresh one, so every task would run"])
        #expect(dryRun.outputLines.contains { $0.hasPrefix("1     build") && $0.hasSuffix("never ran") }, "\(dryRun.outputLines)")
        #expect(FileManager.default.contents(atPath: stateFile(folder)) == original)
        #expect(try setAside(folder).isEmpty)
        #expect(!folder.directory.exists("out.txt"))
    }

    /// A run killed with SIGKILL leaves its pid in `.jobgraph/p.yaml.lock`, but the kernel dropped its `flock`.
    @Test func aLockLeftByAKilledRunBlocksNothing() async throws {
        // `hold` must still run when the kill comes, however late: a task that ended by itself after 60 s
        // let a run under ThreadSanitizer on a loaded machine finish normally first (status 0, lock emptied).
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              hold: {run: "echo $$ > task.pid; exec sleep 3600.771"}
            """, prefix: "jobgraph-stale-lock")
        defer { folder.remove() }
        let killed = try JobGraphBinary.start(["run", "p.yaml", "--progress", "plain"], in: folder.directory)
        let started = await eventually { (folder.directory.read("task.pid") ?? "").hasSuffix("\n") }
        #expect(started)
        killed.send(SIGKILL)
        let outcome = try await killed.finish()
        #expect(outcome.status == 128 + SIGKILL)
        if let task = Int32((folder.directory.read("task.pid") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)) {
            kill(task, SIGKILL)  // the orphaned task: only jobgraph itself had to die
        }
        #expect(folder.directory.read(".jobgraph/p.yaml.lock")?.trimmingCharacters(in: .whitespacesAndNewlines) == String(killed.pid),
                "the dead run's pid stays in the lock file")
        try folder.rewrite("""
            version: 1
            tasks:
              quick: {run: "true"}
            """)
        let next = try await folder.run()
        #expect(next.status == 0, "\(next.outcome.standardError)")
        #expect(next.finalStates["quick"] == "succeeded")
    }
}
