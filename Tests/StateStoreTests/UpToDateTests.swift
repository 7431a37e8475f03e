import Execution
import Foundation
import PipelineModel
import Testing
@testable import StateStore

/// The up-to-date checks of the contract's `inputs` and `outputs`, on real files.
@Suite struct UpToDateTests {
    let directory: TemporaryDirectory
    let hasher = CountingHasher()
    let store: StateStore
    static let definition = TaskDefinition(action: "run", parameters: ["cc -o build/app Sources/*.c"], environment: ["CFLAGS": "-O2"],
                                           inputs: ["Sources/**/*.c"], outputs: ["build/app"])
    var definition: TaskDefinition { Self.definition }

    init() throws {
        directory = try TemporaryDirectory()
        try directory.write("int a;", to: "Sources/a.c")
        try directory.write("int b;", to: "Sources/lib/b.c")
        try directory.write("notes", to: "Sources/README")
        store = try StateStore.open(directory: directory.path, fingerprinter: Fingerprinter(hasher: hasher))
    }

    /// Checks `definition` (the suite's own by default) with its patterns replaced where given.
    func check(_ definition: TaskDefinition? = nil, inputs: [String]? = nil, outputs: [String]? = nil,
               task: TaskID = "app") throws -> UpToDateCheck {
        var definition = definition ?? self.definition
        if let inputs { definition.inputs = inputs }
        if let outputs { definition.outputs = outputs }
        return try store.checkUpToDate(task, definition: definition)
    }

    /// Runs the task as a runner would: start, make the output, record the success with the fingerprints
    /// taken before it ran.
    func succeed(_ check: UpToDateCheck, task: TaskID = "app") throws {
        let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: Date(), taskCount: 1)
        try store.recordTaskStarted(task, run: run)
        try directory.write("binary", to: "build/app")
        try store.recordTask(TaskRecord(task: task, state: .succeeded, attempts: 1, duration: 0.1, exitCode: 0,
                                        definition: check.fingerprints.definition), run: run, fingerprints: check.fingerprints)
        try store.finishRun(run, outcome: .succeeded, endTime: Date())
    }

    @Test func anUnchangedTaskIsUpToDateWithoutReadingItsInputs() throws {
        defer { directory.remove() }
        let first = try check()
        #expect(first.verdict == .outOfDate(.neverRan))
        #expect(first.fingerprints.inputs.map(\.path) == ["Sources/a.c", "Sources/lib/b.c"])
        #expect(hasher.paths.count == 2)
        try succeed(first)

        hasher.reset()
        let second = try check()
        #expect(second.verdict == .upToDate)
        #expect(second.fingerprints == first.fingerprints)
        #expect(hasher.paths == [])

        // A new process sees the same: the records are in state.db.
        let reopened = try StateStore.open(directory: directory.path, fingerprinter: Fingerprinter(hasher: hasher))
        #expect(try reopened.checkUpToDate("app", definition: definition).verdict == .upToDate)
        #expect(hasher.paths == [])
    }

    /// A file no success reads any more is forgotten when a run that changed the inputs ends; a run
    /// that changed nothing (a no-op rerun) leaves the records as they are, and searches for none.
    @Test func fileRecordsNoSuccessReadsAreForgottenAfterARunThatChangedThem() throws {
        defer { directory.remove() }
        try succeed(try check())
        #expect(try store.fileRecord(at: "Sources/a.c") != nil)

        // The task now reads only b.c: its success names b.c alone, and a.c's record goes with the run's end.
        let narrowed = try check(inputs: ["Sources/lib/*.c"])
        try succeed(narrowed)
        #expect(try store.fileRecord(at: "Sources/a.c") == nil)
        #expect(try store.fileRecord(at: "Sources/lib/b.c") != nil)

        // A run that checks and changes nothing ends without touching the records.
        var definition = self.definition
        definition.inputs = ["Sources/lib/*.c"]
        let reopened = try StateStore.open(directory: directory.path, fingerprinter: Fingerprinter(hasher: hasher))
        #expect(try reopened.checkUpToDate("app", definition: definition).verdict == .upToDate)
        let run = try reopened.beginRun(pipelineFile: "ci.yaml", startTime: Date(), taskCount: 1)
        try reopened.recordTask(TaskRecord(task: "app", state: .upToDate, attempts: 0), run: run)
        #expect(!reopened.filesChanged.withLock { $0 })
        try reopened.finishRun(run, outcome: .succeeded, endTime: Date())
        #expect(try reopened.fileRecord(at: "Sources/lib/b.c") != nil)
    }

    @Test func touchingAnInputWithoutChangingItKeepsItUpToDateAndReadsItOnce() throws {
        defer { directory.remove() }
        try succeed(try check())
        let before = try #require(try store.fileRecord(at: "Sources/a.c"))
        try directory.setModificationTime(of: "Sources/a.c", to: 1_800_000_000)

        hasher.reset()
        #expect(try check().verdict == .upToDate)
        #expect(hasher.paths == [directory.path + "/Sources/a.c"])
        let after = try #require(try store.fileRecord(at: "Sources/a.c"))
        #expect(after.modificationNanoseconds == 1_800_000_000 * 1_000_000_000)
        #expect(after.modificationNanoseconds != before.modificationNanoseconds)
        #expect(after.sha256 == before.sha256)
        #expect(after.size == before.size)

        hasher.reset()
        #expect(try check().verdict == .upToDate)
        #expect(hasher.paths == [])
    }

    @Test func changingAnInputsContentNamesIt() throws {
        defer { directory.remove() }
        try succeed(try check())
        try directory.write("int b = 2;", to: "Sources/lib/b.c")
        let verdict = try check().verdict
        #expect(verdict == .outOfDate(.inputChanged("Sources/lib/b.c")))
        #expect(verdict.description == "out-of-date: input 'Sources/lib/b.c' changed")
    }

    @Test func sameSizeNewContentIsSeenThroughTheModificationTime() throws {
        defer { directory.remove() }
        try succeed(try check())
        try directory.write("int z;", to: "Sources/a.c")
        try directory.setModificationTime(of: "Sources/a.c", to: 1_800_000_000)
        #expect(try check().verdict == .outOfDate(.inputChanged("Sources/a.c")))
    }

    @Test func aFileAddedOrRemovedAnywhereUnderDoubleStarCounts() throws {
        defer { directory.remove() }
        try succeed(try check())
        try directory.write("int c;", to: "Sources/lib/deep/er/c.c")
        #expect(try check().verdict == .outOfDate(.inputAdded("Sources/lib/deep/er/c.c")))
        try succeed(try check())
        #expect(try check().verdict == .upToDate)
        try directory.delete("Sources/a.c")
        #expect(try check().verdict == .outOfDate(.inputRemoved("Sources/a.c")))
        // A file the pattern does not match is not an input.
        try succeed(try check())
        try directory.write("more notes", to: "Sources/README")
        #expect(try check().verdict == .upToDate)
    }

    @Test func aDeletedOutputMakesItOutOfDate() throws {
        defer { directory.remove() }
        try succeed(try check())
        try directory.delete("build/app")
        #expect(try check().verdict == .outOfDate(.outputMissing("build/app")))
        #expect(try check(outputs: ["build/*"]).verdict == .outOfDate(.outputPatternsChanged))
    }

    @Test func aGlobOutputNeedsOneMatch() throws {
        defer { directory.remove() }
        let outputs = ["build/*.o"]
        try succeed(try check(outputs: outputs))
        #expect(try check(outputs: outputs).verdict == .outOfDate(.outputMissing("build/*.o")))
        try directory.write("object", to: "build/a.o")
        #expect(try check(outputs: outputs).verdict == .upToDate)
    }

    /// Each change with the reason that names it.
    static let changedDefinitions: [(TaskDefinition, RunReason)] = {
        var command = definition, environment = definition, added = definition, folder = definition, inputs = definition
        command.parameters = ["cc -O3 -o build/app Sources/*.c"]
        environment.environment["CFLAGS"] = "-O0"
        added.environment["LANG"] = "C"
        folder.workingDirectory = "sub"
        inputs.inputs = ["Sources/*.c"]
        return [(command, .commandChanged), (environment, .environmentChanged("CFLAGS")), (added, .environmentChanged("LANG")),
                (folder, .workingDirectoryChanged), (inputs, .inputPatternsChanged)]
    }()

    @Test(arguments: changedDefinitions)
    func aDefinitionChangeMakesItOutOfDateAndIsNamed(changed: TaskDefinition, reason: RunReason) throws {
        defer { directory.remove() }
        try succeed(try check())
        #expect(try check(changed).verdict == .outOfDate(reason))
        #expect(try check().verdict == .upToDate)
    }

    @Test func aParameterChangeIsNamed() throws {
        defer { directory.remove() }
        let download = TaskDefinition(action: "download", parameters: ["url=http://127.0.0.1:1/a", "to=build/app"], outputs: ["build/app"])
        try succeed(try check(download, inputs: []))
        var moved = download
        moved.parameters = ["url=http://127.0.0.1:1/b", "to=build/app"]
        #expect(try check(moved, inputs: []).verdict == .outOfDate(.parameterChanged("url")))
        moved.parameters = download.parameters + ["sha256=00"]
        #expect(try check(moved, inputs: []).verdict == .outOfDate(.parameterChanged("sha256")))
        moved.action = "filter"
        #expect(try check(moved, inputs: []).verdict == .outOfDate(.actionChanged))
    }

    @Test func aTaskThatRanButNeverSucceededSaysSo() throws {
        defer { directory.remove() }
        let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: Date(), taskCount: 1)
        try store.recordTask(TaskRecord(task: "app", state: .failed, attempts: 1, duration: 0.1, exitCode: 1), run: run)
        #expect(try check().verdict == .outOfDate(.neverSucceeded))
    }

    /// The history's tasks are read once (`hasRecordedRun`): a task recorded after that read still counts.
    @Test func aTaskRecordedAfterTheHistoryWasReadHasRun() throws {
        defer { directory.remove() }
        #expect(try check().verdict == .outOfDate(.neverRan))
        let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: Date(), taskCount: 1)
        try store.recordTask(TaskRecord(task: "app", state: .failed, attempts: 1, duration: 0.1, exitCode: 1), run: run)
        #expect(try check().verdict == .outOfDate(.neverSucceeded))
        let reopened = try StateStore.open(directory: directory.path, fingerprinter: Fingerprinter(hasher: hasher))
        #expect(try reopened.checkUpToDate("app", definition: definition).verdict == .outOfDate(.neverSucceeded))
    }

    /// A success recorded before the definition's text was kept: the change is still found, not named.
    @Test func aSuccessWithoutItsDefinitionTextFallsBackToDefinitionChanged() throws {
        defer { directory.remove() }
        var first = try check()
        first.fingerprints.definitionText = nil
        try succeed(first)
        var changed = definition
        changed.parameters = ["cc -O3 -o build/app Sources/*.c"]
        #expect(try check(changed).verdict == .outOfDate(.definitionChanged))
    }

    @Test func outputsWithoutInputsAreUpToDateWhileTheyExist() throws {
        defer { directory.remove() }
        #expect(try check(inputs: []).verdict == .outOfDate(.neverRan))
        try succeed(try check(inputs: []))
        #expect(try check(inputs: []).verdict == .upToDate)
        try directory.delete("build/app")
        #expect(try check(inputs: []).verdict == .outOfDate(.outputMissing("build/app")))
    }

    @Test func aTaskWithNeitherInputsNorOutputsAlwaysRuns() throws {
        defer { directory.remove() }
        let plain = TaskDefinition(action: "run", parameters: ["echo hi"])
        let first = try check(plain, inputs: [], outputs: [], task: "hello")
        #expect(first.verdict == .outOfDate(.untracked))
        try succeed(first, task: "hello")
        #expect(try check(plain, inputs: [], outputs: [], task: "hello").verdict == .outOfDate(.untracked))
    }

    @Test func aFailureOrAKillAfterASuccessMakesItOutOfDate() throws {
        defer { directory.remove() }
        let first = try check()
        try succeed(first)

        // Started and then killed: no record of its end, half-written outputs on disk.
        let killed = try store.beginRun(pipelineFile: "ci.yaml", startTime: Date(), taskCount: 1)
        try store.recordTaskStarted("app", run: killed)
        #expect(try check().verdict == .outOfDate(.lastRunUnsuccessful))

        // Failed.
        try succeed(first)
        let failed = try store.beginRun(pipelineFile: "ci.yaml", startTime: Date(), taskCount: 1)
        try store.recordTask(TaskRecord(task: "app", state: .failed, attempts: 1, duration: 0.1, exitCode: 1), run: failed)
        #expect(try check().verdict == .outOfDate(.lastRunUnsuccessful))

        // Cancelled before it started leaves it as it was.
        try succeed(first)
        let cancelled = try store.beginRun(pipelineFile: "ci.yaml", startTime: Date(), taskCount: 1)
        try store.recordTask(TaskRecord(task: "app", state: .cancelled, attempts: 0), run: cancelled)
        #expect(try check().verdict == .upToDate)
    }

    @Test func anUnreadableInputNeverCountsAsUpToDate() throws {
        defer { directory.remove() }
        struct Refusing: FileHasher {
            func sha256(ofFileAt path: String) throws -> String {
                if path.hasSuffix("b.c") { throw StateStoreError.fileSystem(operation: "open", path: path, errno: EACCES) }
                return try DiskFileHasher().sha256(ofFileAt: path)
            }
        }
        let store = try StateStore.open(directory: directory.path, fingerprinter: Fingerprinter(hasher: Refusing()))
        let first = try store.checkUpToDate("app", definition: definition)
        let run = try store.beginRun(pipelineFile: "ci.yaml", startTime: Date(), taskCount: 1)
        try store.recordTask(TaskRecord(task: "app", state: .succeeded, attempts: 1), run: run, fingerprints: first.fingerprints)
        let second = try store.checkUpToDate("app", definition: definition)
        #expect(second.verdict == .outOfDate(.inputUnreadable("Sources/lib/b.c")))
    }

    @Test func patternsAreRelativeToTheTasksFolder() throws {
        defer { directory.remove() }
        var inSources = definition
        inSources.workingDirectory = "Sources"
        inSources.inputs = ["lib/*.c"]
        inSources.outputs = ["../build/app"]
        let first = try store.checkUpToDate("lib", definition: inSources)
        #expect(first.fingerprints.inputs.map(\.path) == ["Sources/lib/b.c"])
        try succeed(first, task: "lib")
        #expect(try store.checkUpToDate("lib", definition: inSources).verdict == .upToDate)
    }

    @Test func inputsOutsideThePipelineFolderAreKeptByAbsolutePath() throws {
        defer { directory.remove() }
        let outside = try TemporaryDirectory()
        defer { outside.remove() }
        try outside.write("shared", to: "shared.h")
        let check = try self.check(inputs: [outside.path + "/shared.h"], outputs: [])
        #expect(check.fingerprints.inputs.map(\.path) == [outside.path + "/shared.h"])
        #expect(try store.fileRecord(at: outside.path + "/shared.h") != nil)
    }
}
