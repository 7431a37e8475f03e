import Foundation
import Testing
@testable import StateStore

@Suite struct StateStoreTests {
    @Test func openingCreatesTheStateFolderAndTheSchema() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try StateStore.open(directory: directory.path)
        #expect(store.stateDirectory == directory.path + "/.jobgraph")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/.jobgraph/state.db"))
        #expect(try String(contentsOfFile: directory.path + "/.jobgraph/.gitignore", encoding: .utf8) == "*\n")
        let version = try store.withDatabase { database throws(SQLiteError) in try database.userVersion() }
        #expect(version == StateSchema.currentVersion)
        let tables = try store.withDatabase { database throws(SQLiteError) in
            try database.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") { $0.text(0) }
        }
        #expect(tables == ["files", "run_resources", "runs", "slurm_jobs", "slurm_runs", "task_attempts", "task_fingerprints", "task_inputs",
                           "task_runs"])
    }

    @Test func reopeningKeepsTheHistory() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        do {
            let store = try StateStore.open(directory: directory.path)
            let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: start, taskCount: 1)
            try store.recordTask(TaskRecord(task: "build", state: .succeeded, attempts: 1, duration: 2, exitCode: 0), run: run)
            try store.finishRun(run, outcome: .succeeded, endTime: start + 3)
        }
        let reopened = try StateStore.open(directory: directory.path)
        let runs = try reopened.recentRuns(pipelineFile: "ci.yaml")
        #expect(runs.count == 1)
        #expect(runs.first?.outcome == .succeeded)
        #expect(runs.first?.duration == 3)
        #expect(try reopened.tasks(of: try #require(runs.first?.id)).map(\.task) == ["build"])
    }

    @Test func aNewerSchemaIsRefusedWithAnExplanation() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let store = try StateStore.open(directory: directory.path)
            try store.withDatabase { database throws(SQLiteError) in try database.setUserVersion(StateSchema.currentVersion + 1) }
        }
        let error = #expect(throws: StateStoreError.self) { try StateStore.open(directory: directory.path) }
        #expect(error == .newerSchema(path: directory.path + "/.jobgraph/state.db", found: StateSchema.currentVersion + 1, supported: StateSchema.currentVersion))
        #expect(error?.description.contains("a newer jobgraph wrote it") == true)
    }

    @Test func aRelativeDirectoryIsTakenFromTheWorkingDirectory() throws {
        let store = try StateStore.inMemory(directory: ".")
        #expect(store.directory == FileManager.default.currentDirectoryPath)
    }

    @Test func pipelinesAreFiledUnderTheirFileName() {
        #expect(StateStore.pipelineKey("ci.yaml") == "ci.yaml")
        #expect(StateStore.pipelineKey("./ci.yaml") == "ci.yaml")
        #expect(StateStore.pipelineKey("/work/project/ci.yaml") == "ci.yaml")
    }
}
