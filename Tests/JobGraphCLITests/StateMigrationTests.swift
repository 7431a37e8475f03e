import Foundation
import JobGraphTestSupport
import Testing

/// A `state.db` of schema version 7, as the jobgraph with the no-op replay left it, brought to version 8
/// by the first command that opens it (docs/state.md, "Versions"). The file is `Tests/Fixtures/state-v7`,
/// written by that jobgraph: run 1 built `p.yaml`'s two tasks, run 2 replayed its verdict (sharing run 1's
/// task rows), runs 3 and 4 checked every task after an edit of the file's content (run 4 sharing run 3's
/// rows), run 5 replayed run 4's verdict, and run 6 rebuilt after an input changed. `history.json` is what
/// `jobgraph history p.yaml --json` printed then.
@Suite(.hangLimit(minutes: 1))
struct StateMigrationTests {
    static let fixture = Fixtures.directory.appendingPathComponent("state-v7")

    /// A folder holding the fixture's pipeline and its version-7 state.
    private func folderWithVersion7State() throws -> PipelineFolder {
        let folder = try PipelineFolder(try String(contentsOf: Self.fixture.appendingPathComponent("p.yaml"), encoding: .utf8))
        try FileManager.default.createDirectory(atPath: folder.directory.file(".jobgraph"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.fixture.appendingPathComponent("state.db").path,
                                         toPath: folder.directory.file(".jobgraph/state.db"))
        return folder
    }

    /// A JSON value as text with sorted keys, for comparing two parsed documents.
    private static func text(_ value: Any) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])) ?? Data(), as: UTF8.self)
    }

    /// What python3's own SQLite reads from the folder's `state.db` with `script` (given the path as `sys.argv[1]`).
    private static func sqlite(_ script: String, in folder: PipelineFolder) async -> String {
        await folder.python("import sqlite3, sys\ndatabase = sqlite3.connect(sys.argv[1])\n" + script,
                            arguments: [folder.directory.file(".jobgraph/state.db")])
    }

    @Test func historyShowsTheSameRunsAndTasksAfterTheMigration() async throws {
        let folder = try folderWithVersion7State()
        defer { folder.remove() }
        let history = try await folder.history(["--json"])
        #expect(history.status == 0, "\(history.standardError)")
        let found = try #require(try JSONSerialization.jsonObject(with: Data(history.standardOutput.utf8)) as? [String: Any])
        var expected = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.fixture.appendingPathComponent("history.json")))
                                        as? [String: Any])
        // The runs as version 7 showed them, less the note of which run a replayed run repeated.
        let runs = try #require(expected["runs"] as? [[String: Any]])
        #expect(runs.map { $0["id"] as? Int } == [6, 5, 4, 3, 2, 1])
        expected["runs"] = runs.map { run in
            var run = run
            run["replayed"] = nil
            return run
        }
        #expect(Self.text(found) == Self.text(expected))

        let text = try await folder.history()
        #expect(text.outputLines.contains { $0.contains("#2") && $0.hasSuffix("2 up-to-date") }, "\(text.outputLines)")
        #expect(text.outputLines.contains { $0.contains("#5") && $0.hasSuffix("2 up-to-date") }, "\(text.outputLines)")

        // Each run has rows of its own: a replayed run's as it showed them, its tasks up to date with no attempt
        // and the definition of the run it repeated.
        #expect(await Self.sqlite("""
            for row in database.execute("SELECT run_id, task, state, attempts FROM task_runs ORDER BY run_id, task"):
                print("|".join(str(value) for value in row))
            """, in: folder).split(separator: "\n") == [
                "1|a|succeeded|1", "1|b|succeeded|1", "2|a|up-to-date|0", "2|b|up-to-date|0",
                "3|a|up-to-date|0", "3|b|up-to-date|0", "4|a|up-to-date|0", "4|b|up-to-date|0",
                "5|a|up-to-date|0", "5|b|up-to-date|0", "6|a|succeeded|1", "6|b|succeeded|1",
            ])
        #expect(await Self.sqlite("""
            print(database.execute("SELECT count(*) FROM task_runs r JOIN task_runs s ON s.task = r.task AND s.run_id = 1 "
                                   "WHERE r.run_id = 2 AND r.definition = s.definition AND r.duration IS NULL").fetchone()[0])
            """, in: folder) == "2")
        let report = try await JobGraphBinary.run(["report", "p.yaml", "--run", "2", "-o", "2.html"], in: folder.directory)
        #expect(report.status == 0, "\(report.standardError)")
    }

    @Test func theReplaysTablesTriggersAndColumnsAreGoneAndTheIndexByTaskToo() async throws {
        let folder = try folderWithVersion7State()
        defer { folder.remove() }
        #expect(try await folder.history().status == 0)
        #expect(await Self.sqlite("""
            print(database.execute("PRAGMA user_version").fetchone()[0])
            print(",".join(row[0] for row in database.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")))
            print(database.execute("SELECT count(*) FROM sqlite_master WHERE type = 'trigger'").fetchone()[0])
            print(",".join(row[0] for row in database.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")))
            print(",".join(row[1] for row in database.execute("PRAGMA table_info(runs)")))
            print(database.execute("PRAGMA integrity_check").fetchone()[0])
            """, in: folder).split(separator: "\n") == [
                "12", "files,run_resources,runs,slurm_jobs,slurm_runs,task_attempts,task_fingerprints,task_inputs,task_runs", "0", "runs_by_pipeline",
                "id,pipeline,started_at,ended_at,outcome,task_count,jobs,critical_path,nested_in", "ok",
            ])
    }

    @Test func aRunOnTheMigratedStateIsRecordedAsAny() async throws {
        let folder = try folderWithVersion7State()
        defer { folder.remove() }
        try folder.write("gamma\n", to: "src/words.txt")
        let run = try await folder.run()
        #expect(run.status == 0, "\(run.outcome.standardError)")
        #expect(run.executed == ["a", "b"], "the outputs are not in the fixture")
        #expect(try await folder.run().upToDate == ["a", "b"])
        let history = try await folder.history()
        #expect(history.outputLines.contains { $0.contains("#8") && $0.hasSuffix("2 up-to-date") }, "\(history.outputLines)")
        #expect(history.outputLines.contains { $0.contains("#7") && $0.hasSuffix("2 succeeded") }, "\(history.outputLines)")
    }

    /// Version 9 keys each up-to-date record by pipeline file and task: the fixture's, written for `p.yaml`'s
    /// tasks by bare id, move under `p.yaml` with their inputs.
    @Test func theUpToDateRecordsMoveUnderTheirPipelinesName() async throws {
        let folder = try folderWithVersion7State()
        defer { folder.remove() }
        let before = await Self.sqlite("""
            print(database.execute("SELECT count(*) FROM task_inputs").fetchone()[0])
            """, in: folder)
        #expect(try await folder.history().status == 0)
        #expect(await Self.sqlite("""
            print(",".join(row[0].replace("\\x1f", "|") for row in database.execute("SELECT task FROM task_fingerprints ORDER BY task")))
            print(",".join(sorted(set(row[0].replace("\\x1f", "|") for row in database.execute("SELECT task FROM task_inputs")))))
            print(database.execute("SELECT count(*) FROM task_inputs").fetchone()[0])
            print(database.execute("PRAGMA foreign_key_check").fetchall())
            """, in: folder).split(separator: "\n") == ["p.yaml|a,p.yaml|b", "p.yaml|a,p.yaml|b", Substring(before.trimmingCharacters(in: .whitespacesAndNewlines)), "[]"])
    }
}
