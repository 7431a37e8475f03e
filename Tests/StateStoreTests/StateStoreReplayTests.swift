import Execution
import Foundation
import Glibc
import PipelineModel
import Testing
import YAMLNodes
@testable import StateStore

/// The state store's part of the no-op replay (`NoOpReplayRecord`, `StateStore+Replay`): the generation
/// counter, the record's bytes, its validity checks, and the replayed run's history.
@Suite struct StateStoreReplayTests {
    private func generation(_ store: StateStore) throws -> Int64 {
        try store.withDatabase { database throws(SQLiteError) in try StateStore.generation(in: database) }
    }

    @Test func everyChangeToTheUpToDateTablesBumpsTheGenerationAndHistoryDoesNot() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try StateStore.inMemory(directory: directory.path)
        let start = try generation(store)
        let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: Date(), taskCount: 1)
        try store.recordTask(TaskRecord(task: "build", state: .upToDate, attempts: 0, duration: nil, exitCode: nil), run: run)
        #expect(try generation(store) == start, "history rows are not up-to-date tables")

        try store.recordSuccess("build", fingerprints: TaskFingerprints(definition: "d1", inputs: [.init(path: "a.txt", sha256: "00")]))
        let afterSuccess = try generation(store)
        #expect(afterSuccess > start)
        try store.storeFileRecords([FileRecord(path: "a.txt", size: 1, modificationNanoseconds: 2, inode: 3, sha256: "00")])
        let afterFiles = try generation(store)
        #expect(afterFiles > afterSuccess)
        try store.recordTaskStarted("build", run: run)  // withdraws the success: an UPDATE
        #expect(try generation(store) > afterFiles)
    }

    @Test func aVersion3StateFileGainsTheReplayTablesAndKeepsItsRuns() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Self.writeStateFile(in: directory, version: 3, rows: """
            INSERT INTO runs (pipeline, started_at, ended_at, outcome, task_count) VALUES ('ci.yaml', 1.0, 3.0, 'succeeded', 1);
            """)
        let store = try StateStore.open(directory: directory.path)
        #expect(try store.withDatabase { database throws(SQLiteError) in try database.userVersion() } == StateSchema.currentVersion)
        #expect(try generation(store) == 0)
        let runs = try store.recentRuns(pipelineFile: "ci.yaml")
        #expect(runs.map(\.id) == [RunID(1)])
        #expect(runs.first?.replayedRun == nil)
    }

    @Test func aVersion4ReplayedRunKeepsTheRowsItCopied() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Self.writeStateFile(in: directory, version: 4, rows: """
            INSERT INTO runs (id, pipeline, started_at, ended_at, outcome, task_count) VALUES (1, 'ci.yaml', 1.0, 2.0, 'succeeded', 1);
            INSERT INTO runs (id, pipeline, started_at, ended_at, outcome, task_count, replayed_run) VALUES (2, 'ci.yaml', 3.0, 4.0, 'succeeded', 1, 1);
            INSERT INTO task_runs (run_id, task, state, attempts, definition) VALUES (1, 'build', 'up-to-date', 0, 'd1');
            INSERT INTO task_runs (run_id, task, state, attempts, definition) VALUES (2, 'build', 'up-to-date', 0, 'd1');
            """)
        let store = try StateStore.open(directory: directory.path, retainedRuns: 1)
        #expect(try store.withDatabase { database throws(SQLiteError) in try database.userVersion() } == StateSchema.currentVersion)
        #expect(try store.tasks(of: RunID(2)).map(\.definition) == ["d1"])
        #expect(try store.recentRuns(pipelineFile: "ci.yaml").first?.tasks.upToDate == 1)
    }

    @Test func aVersion5ReplayRecordIsDroppedAndTheRunsAreKept() throws {
        // Version 5 kept the pipeline's bytes; version 6 keeps their length and hash, so the next run checks.
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Self.writeStateFile(in: directory, version: 5, rows: """
            INSERT INTO runs (id, pipeline, started_at, ended_at, outcome, task_count) VALUES (1, 'ci.yaml', 1.0, 2.0, 'succeeded', 1);
            INSERT INTO task_runs (run_id, task, state, attempts, definition) VALUES (1, 'build', 'up-to-date', 0, 'd1');
            INSERT INTO noop_replays (pipeline, key, pipeline_bytes, generation, source_run, task_count, body)
            VALUES ('ci.yaml', x'01', x'0A', 0, 1, 1, x'00');
            """)
        let store = try StateStore.open(directory: directory.path)
        #expect(try store.withDatabase { database throws(SQLiteError) in try database.userVersion() } == StateSchema.currentVersion)
        #expect(try store.withDatabase { database throws(SQLiteError) in
            try database.query("SELECT count(*) FROM noop_replays") { $0.integer(0) }.first
        } == 0)
        #expect(store.validReplay(pipelineFile: "ci.yaml", key: [1], pipeline: PipelineFileDigest(of: [10])) == nil)
        #expect(try store.recentRuns(pipelineFile: "ci.yaml").map(\.id) == [RunID(1)])
    }

    /// `.jobgraph/state.db` as jobgraph of schema `version` left it, holding `rows` (SQL).
    private static func writeStateFile(in directory: TemporaryDirectory, version: Int, rows: String) throws {
        try FileManager.default.createDirectory(atPath: directory.path + "/.jobgraph", withIntermediateDirectories: true)
        let old = try SQLiteDatabase(location: .path(directory.path + "/.jobgraph/state.db"))
        for step in 0..<version { try old.execute(StateSchema.migrations[step]) }
        try old.setUserVersion(version)
        try old.execute(rows)
    }

    /// The pipeline file the records below were made from.
    private static let pipelineBytes = Array("version: 1\n".utf8)

    private func record(key: [UInt8] = [1, 2, 3], paths: [NoOpReplayRecord.ExaminedPath] = [], generation: Int64 = 0,
                        source: RunID = RunID(1)) -> NoOpReplayRecord {
        NoOpReplayRecord(key: key, pipeline: PipelineFileDigest(of: Self.pipelineBytes), generation: generation, sourceRun: source,
                         pipelineFile: "ci.yaml", outputMode: "grouped", paths: paths,
                         tasks: [NoOpReplay.Task(id: "build", queue: "default", reason: "up-to-date"),
                                 NoOpReplay.Task(id: "test", queue: "slow", reason: nil)],
                         criticalPath: ["build"])
    }

    @Test func theRecordsBodyReadsBackAsWritten() throws {
        let paths = [NoOpReplayRecord.ExaminedPath(path: "/w/a.txt", status: FileStatus(kind: .regular, size: 5,
                                                                                        modificationNanoseconds: -7, inode: .max)),
                     NoOpReplayRecord.ExaminedPath(path: "/w/missing", status: nil)]
        let original = record(paths: paths)
        let body = original.body
        let decoded = try #require(body.withUnsafeBytes(NoOpReplayRecord.decodeBody))
        #expect(decoded.pipelineFile == original.pipelineFile)
        #expect(decoded.outputMode == "grouped")
        #expect(decoded.paths == paths)
        #expect(decoded.tasks == original.tasks)
        #expect(decoded.criticalPath == ["build"])
        // Damaged bytes are no record, never a crash.
        for length in [0, 1, 9, body.count / 2, body.count - 1] {
            #expect(Array(body.prefix(length)).withUnsafeBytes(NoOpReplayRecord.decodeBody) == nil)
        }
        #expect((body + [0]).withUnsafeBytes(NoOpReplayRecord.decodeBody) == nil)
    }

    /// Paths in several folders, a bare name, a path at the root and one ending in `/`; tasks sharing
    /// queues and reasons: all read back, each folder's files together, in far fewer bytes than 8 to an
    /// integer and each path whole would take.
    @Test func aLargeRecordsBodyReadsBackGroupedAndCompact() throws {
        var paths: [NoOpReplayRecord.ExaminedPath] = []
        for index in 0..<1_000 {
            let folder = ["/work/project/out/", "/work/project/src/", "/work/project/out/"][index % 3]
            paths.append(.init(path: folder + "t\(index)", status: FileStatus(kind: .regular, size: Int64(index),
                                                                              modificationNanoseconds: 1_764_000_000_000_000_000 + Int64(index),
                                                                              inode: 9_000_000 + UInt64(index))))
        }
        paths += [.init(path: "bare", status: nil), .init(path: "/root-level", status: FileStatus(kind: .directory, size: 0,
                                                                                                    modificationNanoseconds: 0, inode: 2)),
                  .init(path: "/work/project/dir/", status: nil)]
        var tasks: [NoOpReplay.Task] = []
        for index in 0..<1_000 {
            tasks.append(NoOpReplay.Task(id: TaskID("t\(index)"), queue: index % 10 == 0 ? "slow" : "default",
                                         reason: index % 7 == 0 ? nil : "inputs and outputs unchanged since the last success"))
        }
        let original = NoOpReplayRecord(key: [1], pipeline: PipelineFileDigest(of: Self.pipelineBytes), generation: 3,
                                        sourceRun: RunID(1), pipelineFile: "ci.yaml", outputMode: nil, paths: paths, tasks: tasks,
                                        criticalPath: [])
        let body = original.body
        let decoded = try #require(body.withUnsafeBytes(NoOpReplayRecord.decodeBody))
        #expect(decoded.outputMode == nil)
        #expect(decoded.tasks == tasks)
        #expect(decoded.criticalPath.isEmpty)
        #expect(decoded.paths.count == paths.count)
        #expect(Set(decoded.paths.map(\.path)) == Set(paths.map(\.path)))
        for examined in decoded.paths {
            #expect(paths.first { $0.path == examined.path }?.status == examined.status, "\(examined.path)")
        }
        let folders: [String] = decoded.paths.map { examined in
            examined.path.lastIndex(of: "/").map { String(examined.path[...$0]) } ?? ""
        }
        let runs = folders.indices.filter { index in index == 0 || folders[index - 1] != folders[index] }
        #expect(runs.count == 5, "each folder's files together")
        // 8 bytes to each integer and every path whole took about 120 bytes a path and task here.
        #expect(body.count < 30 * 1_000, "\(body.count) bytes")
    }

    @Test func theKeyTellsCommandsApart() {
        let base = NoOpReplayRecord.key(version: "1", workingDirectory: "/w", arguments: ["ab", "c"])
        #expect(base == NoOpReplayRecord.key(version: "1", workingDirectory: "/w", arguments: ["ab", "c"]))
        #expect(base != NoOpReplayRecord.key(version: "1", workingDirectory: "/w", arguments: ["a", "bc"]))
        #expect(base != NoOpReplayRecord.key(version: "2", workingDirectory: "/w", arguments: ["ab", "c"]))
        #expect(base != NoOpReplayRecord.key(version: "1", workingDirectory: "/v", arguments: ["ab", "c"]))
    }

    /// What the command line gives a replay attempt: the same command is the same key whatever the order of
    /// its `--var`s, and another file, task list, variable or executor is another command.
    @Test func theAttemptsKeyTellsCommandsApartButNotTheOrderOfTheirVars() {
        func key(_ file: String = "ci.yaml", tasks: [String] = ["build"], vars: [String] = ["a=1", "b=2"],
                 executor: String = "", in directory: String = "/w") -> [UInt8] {
            NoOpReplayAttempt(pipelineFile: file, tasks: tasks, variables: vars, executor: executor, workingDirectory: directory).key
        }
        #expect(key() == key(vars: ["b=2", "a=1"]))
        #expect(key() != key("other.yaml"))
        #expect(key() != key(tasks: ["build", "test"]))
        #expect(key() != key(tasks: []))
        #expect(key() != key(vars: ["a=1", "b=3"]))
        #expect(key() != key(executor: "local"))
        #expect(key() != key(in: "/v"))
        // No such file: nothing to digest, so no record can hold.
        #expect(NoOpReplayAttempt(pipelineFile: "/nonexistent/ci.yaml", tasks: [], variables: [], executor: "",
                                  workingDirectory: "/w").pipelineBytes == nil)
    }

    /// A store holding run 1 with two up-to-date rows, and a replay record of it over `a.txt` in `directory`.
    private func recordedStore(in directory: TemporaryDirectory, retainedRuns: Int = 50) throws -> (StateStore, NoOpReplayRecord) {
        let store = try StateStore.inMemory(directory: directory.path, retainedRuns: retainedRuns)
        let file = directory.path + "/a.txt"
        try "alpha".write(toFile: file, atomically: false, encoding: .utf8)
        let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: Date(), taskCount: 2)
        for task in ["build", "test"] {
            try store.recordTask(TaskRecord(task: TaskID(task), state: .upToDate, attempts: 0, duration: nil, exitCode: nil,
                                            definition: "d-" + task), run: run)
        }
        try store.finishRun(run, outcome: .succeeded, endTime: Date())
        let saved = record(paths: [.init(path: file, status: FileStatus(path: file)), .init(path: directory.path + "/gone", status: nil)],
                           generation: try generation(store), source: run)
        try store.withDatabase { database throws(SQLiteError) in
            try database.run("""
                INSERT INTO noop_replays (pipeline, key, pipeline_length, pipeline_hash, generation, source_run, task_count, body)
                VALUES ('ci.yaml', ?1, ?2, ?3, ?4, ?5, 2, ?6)
                """, [.blob(saved.key), .integer(saved.pipeline.length), .integer(Int64(bitPattern: saved.pipeline.hash)),
                      .integer(saved.generation), .integer(run.rawValue), .blob(saved.body)])
        }
        return (store, saved)
    }

    @Test func aRecordIsValidOnlyWhileEverythingItRestsOnIsEqual() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (store, saved) = try recordedStore(in: directory)
        #expect(store.validReplay(pipelineFile: "ci.yaml", key: saved.key, pipeline: saved.pipeline) == saved)
        #expect(store.validReplay(pipelineFile: "./ci.yaml", key: saved.key, pipeline: saved.pipeline) != nil)
        #expect(store.validReplay(pipelineFile: "other.yaml", key: saved.key, pipeline: saved.pipeline) == nil)
        #expect(store.validReplay(pipelineFile: "ci.yaml", key: saved.key + [0], pipeline: saved.pipeline) == nil)
        #expect(store.validReplay(pipelineFile: "ci.yaml", key: saved.key, pipeline: PipelineFileDigest(of: Self.pipelineBytes + [10])) == nil)
        // A file of the same length with one byte changed.
        var edited = Self.pipelineBytes
        edited[edited.count - 1] ^= 1
        #expect(store.validReplay(pipelineFile: "ci.yaml", key: saved.key, pipeline: PipelineFileDigest(of: edited)) == nil)

        // A path that appears where the checks found none.
        try "".write(toFile: directory.path + "/gone", atomically: false, encoding: .utf8)
        #expect(store.validReplay(pipelineFile: "ci.yaml", key: saved.key, pipeline: saved.pipeline) == nil)
        unlink(directory.path + "/gone")
        #expect(store.validReplay(pipelineFile: "ci.yaml", key: saved.key, pipeline: saved.pipeline) != nil)

        // A change to the up-to-date tables, by any writer.
        try store.recordSuccess("elsewhere", fingerprints: TaskFingerprints(definition: "d", inputs: []))
        #expect(store.validReplay(pipelineFile: "ci.yaml", key: saved.key, pipeline: saved.pipeline) == nil)
    }

    /// A record that knows what its pipeline file said holds for other bytes that say the same (a comment
    /// added), once the caller has read what they say; replayed, it names the new bytes from then on.
    @Test func aRecordHoldsForOtherBytesThatSayTheSame() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (store, saved) = try recordedStore(in: directory)
        let commented = PipelineFileDigest(of: Self.pipelineBytes + Array("# a comment\n".utf8))
        #expect(store.replayCandidate(pipelineFile: "ci.yaml", key: saved.key, pipeline: commented) == nil,
                "a record that does not know what its file said holds only for its bytes")
        let content = YAMLContentDigest(checkpoints: [76, 77])
        try store.withDatabase { database throws(SQLiteError) in
            try database.run("UPDATE noop_replays SET pipeline_content = ?1", [.blob(content.storedBytes)])
        }

        let candidate = try #require(store.replayCandidate(pipelineFile: "ci.yaml", key: saved.key, pipeline: commented))
        #expect(candidate.contentToMatch == content)
        #expect(candidate.validRecord() == nil, "what the new bytes say is not known yet")
        #expect(candidate.validRecord(content: YAMLContentDigest(checkpoints: [76, 78])) == nil)
        let record = try #require(candidate.validRecord(content: content))
        #expect(record.pipeline == PipelineFileDigest(of: Self.pipelineBytes + Array("# a comment\n".utf8), content: content))
        #expect(record.tasks == saved.tasks && record.sourceRun == saved.sourceRun)
        // Everything else still counts: another command.
        #expect(store.replayCandidate(pipelineFile: "ci.yaml", key: saved.key + [0], pipeline: commented) == nil)

        let replayed = try #require(try store.beginReplayedRun(record, startTime: Date(), jobs: 1))
        try store.finishRun(replayed, outcome: .succeeded, endTime: Date())
        #expect(store.validReplay(pipelineFile: "ci.yaml", key: saved.key, pipeline: commented)?.sourceRun == saved.sourceRun,
                "the record names the bytes it was replayed for")
        #expect(store.replayCandidate(pipelineFile: "ci.yaml", key: saved.key, pipeline: saved.pipeline)?.contentToMatch == content,
                "the first bytes need their content read again")
    }

    @Test func aReplayedRunSharesTheHistoryOfTheRunItRepeats() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (store, saved) = try recordedStore(in: directory)
        let rowsBefore = try Self.taskRowCount(in: store)
        let replayed = try #require(try store.beginReplayedRun(saved, startTime: Date(), jobs: 3))
        try store.finishRun(replayed, outcome: .succeeded, endTime: Date())
        #expect(try Self.taskRowCount(in: store) == rowsBefore, "the rows are shared, not copied")
        #expect(try store.tasks(of: replayed) == store.tasks(of: saved.sourceRun))
        #expect(try store.tasks(of: replayed).map(\.definition) == ["d-build", "d-test"])
        let runs = try store.recentRuns(pipelineFile: "ci.yaml")
        #expect(runs.first?.id == replayed)
        #expect(runs.first?.replayedRun == saved.sourceRun)
        #expect(runs.first?.tasks.upToDate == 2)
        #expect(try store.runTimeline(pipelineFile: "ci.yaml")?.jobs == 3)
        // The next replay repeats the recorded run too.
        let next = try #require(store.validReplay(pipelineFile: "ci.yaml", key: saved.key, pipeline: saved.pipeline))
        #expect(next.sourceRun == saved.sourceRun)
    }

    @Test func theRunsReplayedRunsShareIsKeptUntilNoKeptRunNeedsIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (store, saved) = try recordedStore(in: directory, retainedRuns: 3)
        let replays = try Self.replay(saved, times: 5, in: store)
        // The latest 3 runs, and the recorded one whose rows they show.
        #expect(try store.recentRuns(pipelineFile: "ci.yaml").map(\.id) == Array(replays.suffix(3).reversed()) + [saved.sourceRun])
        #expect(try store.tasks(of: replays[4]).map(\.definition) == ["d-build", "d-test"])
        #expect(try store.runTimeline(pipelineFile: "ci.yaml")?.tasks.count == 2)
        // Three normal runs later no kept run needs the recorded one.
        for _ in 0..<3 {
            let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: Date(), taskCount: 0)
            try store.finishRun(run, outcome: .succeeded, endTime: Date())
        }
        #expect(try store.recentRuns(pipelineFile: "ci.yaml").count == 3)
        #expect(try Self.taskRowCount(in: store) == 0)
        #expect(store.validReplay(pipelineFile: "ci.yaml", key: saved.key, pipeline: saved.pipeline) == nil)
    }

    /// A replay drops only old replayed runs, a row each; old runs with rows of their own wait for the next
    /// run that checks its tasks, which drops them.
    @Test func aReplayLeavesOldRunsWithRowsToTheNextNormalRun() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (store, saved) = try recordedStore(in: directory, retainedRuns: 3)
        var normal: [RunID] = []
        for _ in 0..<2 {
            let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: Date(), taskCount: 2)
            try store.recordTask(TaskRecord(task: TaskID("build"), state: .succeeded, attempts: 1, duration: 1, exitCode: 0,
                                            definition: "d-build"), run: run)
            try store.finishRun(run, outcome: .succeeded, endTime: Date())
            normal.append(run)
        }
        let replays = try Self.replay(saved, times: 4, in: store, makingRoom: true)
        // The latest 3 runs, and the 3 older ones with rows: replays[0] went, a row of `runs` and nothing else.
        #expect(try store.recentRuns(pipelineFile: "ci.yaml", limit: 20).map(\.id)
                == Array(replays.suffix(3).reversed()) + normal.reversed() + [saved.sourceRun])
        #expect(try Self.taskRowCount(in: store) == 4)
        let next = try store.beginRun(pipelineFile: "ci.yaml", startTime: Date(), taskCount: 0)
        #expect(try store.recentRuns(pipelineFile: "ci.yaml", limit: 20).map(\.id)
                == [next] + Array(replays.suffix(2).reversed()) + [saved.sourceRun])
        #expect(try Self.taskRowCount(in: store) == 2, "the kept replays still show the rows of the run they repeat")
    }

    /// `count` replayed runs of `saved`, each finished; with `makingRoom`, each after `makeRoomForRun`, as
    /// the command makes them.
    private static func replay(_ saved: NoOpReplayRecord, times count: Int, in store: StateStore,
                               makingRoom: Bool = false) throws -> [RunID] {
        try (0..<count).map { _ in
            if makingRoom { try store.makeRoomForRun(pipelineFile: saved.pipelineFile) }
            let run = try #require(try store.beginReplayedRun(saved, startTime: Date(), jobs: 1))
            try store.finishRun(run, outcome: .succeeded, endTime: Date())
            return run
        }
    }

    private static func taskRowCount(in store: StateStore) throws -> Int64 {
        try store.withDatabase { database throws(SQLiteError) in
            try database.query("SELECT count(*) FROM task_runs") { $0.integer(0) }.first ?? -1
        }
    }

    @Test func aRecordWhoseRunLostItsRowsIsNoReplayAndWritesNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (store, saved) = try recordedStore(in: directory)
        try store.withDatabase { database throws(SQLiteError) in try database.run("DELETE FROM task_runs WHERE task = 'test'") }
        #expect(store.validReplay(pipelineFile: "ci.yaml", key: saved.key, pipeline: saved.pipeline) == nil)
        #expect(try store.beginReplayedRun(saved, startTime: Date(), jobs: 1) == nil)
        #expect(try store.recentRuns(pipelineFile: "ci.yaml").count == 1)
    }
}
