import Execution
import Foundation
import JobGraphBasics
import JobGraphSystem
import JobGraphTestSupport
import PipelineModel
import StateStore
import Steps
import TaskGraph
import Testing

/// The Runner with a real `StateStore` behind `RunRecorder` and real processes: what each run leaves in
/// `.jobgraph/state.db`, and how the next run reads it (contract: `inputs`, `outputs`, `--force`, history).
@Suite(.hangLimit(minutes: 1))
struct HistoryRunTests {
    @Test func everyTaskOfARunIsRecordedWithItsStateAttemptsDurationAndExitCode() async throws {
        let project = try Project("""
            version: 1
            tasks:
              ok: {run: "sleep 0.2"}
              flaky: {run: "if [ -e flaked ]; then exit 0; fi; touch flaked; exit 5", retries: 1, retry_delay: 0s}
              unmet: {run: "true", conditions: [{file_exists: nowhere.txt}]}
              broken: {needs: [ok, flaky], run: "exit 3"}
              after: {needs: [broken], run: "true"}
            """)
        defer { project.remove() }
        let run = try await project.run()
        #expect(run.problems.isEmpty)
        let records = Dictionary(uniqueKeysWithValues: try project.store.tasks(of: run.id).map { ($0.task.rawValue, $0) })
        #expect(records.mapValues(\.state) == ["ok": .succeeded, "flaky": .succeeded, "unmet": .skipped, "broken": .failed,
                                               "after": .skipped])
        #expect(records["flaky"]?.attempts == 2)
        #expect(records["ok"]?.attempts == 1)
        #expect(records["ok"]?.exitCode == 0)
        #expect(records["ok"]?.duration.map { $0 >= 0.2 && $0 < 5 } == true)
        #expect(records["broken"]?.exitCode == 3)
        #expect(records["after"]?.attempts == 0)

        let recorded = try #require(try project.store.recentRuns(pipelineFile: "pipeline.yaml").first)
        #expect(recorded.outcome == .failed)
        #expect(recorded.tasks == TaskStateCounts(succeeded: 2, failed: 1, skipped: 2))
        #expect(recorded.duration.map { $0 >= 0.2 } == true)
    }

    @Test func tasksAFailureKeepsFromStartingAreRecordedAsCancelledNotLeftUnfinished() async throws {
        let project = try Project("""
            version: 1
            tasks:
              fail: {run: "exit 1", priority: high}
              never: {run: "true"}
              after: {needs: [fail], run: "true"}
            """)
        defer { project.remove() }
        let run = try await project.run(jobs: 1)
        #expect(run.summary.counts[.cancelled] == 1)
        let states = Dictionary(uniqueKeysWithValues: try project.store.tasks(of: run.id).map { ($0.task.rawValue, $0.state) })
        #expect(states == ["fail": .failed, "never": .cancelled, "after": .skipped])
        let recorded = try #require(try project.store.recentRuns().first)
        #expect(recorded.tasks.unfinished == 0)
        #expect(recorded.tasks == TaskStateCounts(failed: 1, skipped: 1, cancelled: 1))
    }

    @Test func aSecondRunIsUpToDateAndRecordsNoAttempts() async throws {
        let project = try Project("""
            version: 1
            tasks:
              make: {run: "echo made > made.txt", inputs: [source.txt], outputs: [made.txt]}
              use: {needs: [make], run: "cat made.txt > used.txt", inputs: [made.txt], outputs: [used.txt]}
            """)
        defer { project.remove() }
        try project.directory.write("source", to: "source.txt")
        let first = try await project.run()
        #expect(first.observer.finalState(of: "make") == .succeeded)
        let second = try await project.run()
        #expect(second.observer.finalState(of: "make") == .upToDate)
        #expect(second.observer.finalState(of: "use") == .upToDate)
        #expect(second.summary.counts[.upToDate] == 2)
        let records = try project.store.tasks(of: second.id)
        #expect(records.map(\.state) == [.upToDate, .upToDate])
        #expect(records.map(\.attempts) == [0, 0])
        #expect(records.allSatisfy { $0.duration == nil })
        // An up-to-date run adds no duration samples: the median stays that of real executions.
        #expect(try project.store.medianDurations().count == 2)
    }

    /// Enough tasks for the pass before the run to check them on several threads at once
    /// (`UpToDatePrepass.tasksPerWay`), in chains of ten: a change at the head of one chain runs that chain.
    @Test func aLargeGraphIsCheckedAtOnceAndRunsOnlyWhatAChangeReaches() async throws {
        let chains = 10, length = 10
        let project = try Project(chainsYAML(chains: chains, length: length))
        defer { project.remove() }
        for chain in 0..<chains { try project.directory.write("chain \(chain)", to: "src-\(chain).txt") }
        let build = try await project.run()
        #expect(build.summary.counts[.succeeded] == chains * length)
        let rerun = try await project.run()
        #expect(rerun.summary.counts[.upToDate] == chains * length)

        try project.directory.write("chain 3, changed", to: "src-3.txt")
        let changed = try await project.run()
        let ran = Set((0..<chains).flatMap { chain in (0..<length).map { "t\(chain)-\($0)" } }.filter {
            changed.observer.finalState(of: TaskID($0)) == .succeeded
        })
        #expect(ran == Set((0..<length).map { "t3-\($0)" }))
        #expect(changed.summary.counts[.upToDate] == (chains - 1) * length)
        #expect(project.directory.read("out/3-9.txt") == "chain 3, changed")
    }

    @Test func theCheckBeforeTheRunSkipsTasksBehindATaskWithNoSuccess() async throws {
        // Three chains of three: only a task whose needs all have a success can be found up to date, so only
        // those are checked before the run; the rest are checked as they start.
        let project = try Project(chainsYAML(chains: 3, length: 3))
        defer { project.remove() }
        for chain in 0..<3 { try project.directory.write("chain \(chain)", to: "src-\(chain).txt") }
        let checked = Locked<[String]>([])
        let counting = { (recorder: RunRecorder) -> any TaskHistory in BatchNotingHistory(recorder, checked: checked) }

        let first = try await project.run(history: counting)
        #expect(first.summary.counts[.succeeded] == 9)
        #expect(checked.withLock { $0.sorted() } == ["t0-0", "t1-0", "t2-0"])

        checked.withLock { $0 = [] }
        let rerun = try await project.run(history: counting)
        #expect(rerun.summary.counts[.upToDate] == 9)
        #expect(checked.withLock { $0.count } == 9)
    }

    @Test func forceRunsEverythingAndStillRecordsWhatTheNextCheckCompares() async throws {
        let project = try Project("""
            version: 1
            tasks:
              make: {run: "echo made >> made.txt", outputs: [made.txt]}
            """)
        defer { project.remove() }
        _ = try await project.run()
        let forced = try await project.run(force: true)
        #expect(forced.observer.finalState(of: "make") == .succeeded)
        #expect(project.directory.read("made.txt") == "made\nmade\n")
        let plain = try await project.run()
        #expect(plain.observer.finalState(of: "make") == .upToDate)
    }

    @Test func anInterruptedTaskIsRecordedCancelledAndRunsAgainDespiteItsHalfWrittenOutput() async throws {
        let project = try Project("""
            version: 1
            tasks:
              quick: {run: "echo q > q.txt", outputs: [q.txt]}
              long: {needs: [quick], run: "echo partial > long.txt; sleep $(cat delay.txt); echo done > long.txt", outputs: [long.txt]}
            """)
        defer { project.remove() }
        try project.directory.write("30.25", to: "delay.txt")
        let interrupted = try await project.run { event, runner in
            if case .transition(let transition) = event, transition.task == "long", transition.to == .executing {
                // The output appears as soon as the task's shell has started.
                _ = await eventually { project.directory.exists("long.txt") }
                runner.control(.interrupt)
            }
        }
        #expect(interrupted.summary.stop == .interrupt)
        let states = Dictionary(uniqueKeysWithValues: try project.store.tasks(of: interrupted.id).map { ($0.task.rawValue, $0.state) })
        #expect(states == ["quick": .succeeded, "long": .cancelled])
        #expect(try project.store.recentRuns().first?.outcome == .interrupted)

        try project.directory.write("0", to: "delay.txt")
        let rerun = try await project.run()
        #expect(rerun.observer.finalState(of: "quick") == .upToDate)
        #expect(rerun.observer.finalState(of: "long") == .succeeded)
        #expect(project.directory.read("long.txt") == "done\n")
    }

    /// While a task's check at its start hashes a large changed input, another task's lines and transitions
    /// go on (STYLE: "The event loop only waits"). `chatty` prints `one` only once the hash has begun, and
    /// `two` only once `one` reached the events, and the hash answers only once `chatty` succeeded: on a
    /// worker that is the order; on the loop's thread the hasher could not wait (nothing would deliver
    /// `one`), so it answers at once, and `big` ends before `one` arrives.
    @Test func aLongCheckAtATasksStartHoldsUpNoOtherTasksOutput() async throws {
        let hasher = GatedHasher(gated: "big.bin")
        let project = try Project("""
            version: 1
            tasks:
              first: {run: "until [ -e released ]; do sleep 0.01; done", when: always}
              big: {needs: [first], run: "touch big.done", inputs: [big.bin], outputs: [big.done]}
              chatty:
                priority: high
                run: "echo up; until [ -e hashing ]; do sleep 0.01; done; echo one; until [ -e seen ]; do sleep 0.01; done; echo two"
            """, hasher: hasher)
        defer { project.remove() }
        // Large, mostly a hole, which the hash reads all the same. Not the 1 GB of the issue: the gate, not
        // the size, makes the order, and a gigabyte read twice is time taken from every test running beside
        // this one. `first` runs always, so the pass before the run leaves `big` to its check at its start;
        // it ends once `up` came through the loop, so the loop (not the thread that started the first
        // tasks) is what starts `big`.
        try project.directory.write("the head of a large input\n", to: "big.bin")
        let big = try #require(FileHandle(forWritingAtPath: project.directory.file("big.bin")))
        try big.truncate(atOffset: 16 << 20)
        try big.close()
        let seeing: (RunEvent, Runner) async -> Void = { event, _ in
            if case .output(task: "chatty", line: "up") = event { try? project.directory.write("", to: "released") }
            if case .output(task: "chatty", line: "one") = event { try? project.directory.write("", to: "seen") }
            if case .transition(let transition) = event, transition.task == "chatty", transition.to == .succeeded { hasher.open() }
        }
        let build = try await project.run(jobs: 3, react: seeing)
        #expect(build.observer.finalState(of: "big") == .succeeded)

        for marker in ["released", "hashing", "seen"] { try FileManager.default.removeItem(atPath: project.directory.file(marker)) }
        // A new modification time, the same content: the check must read the file again to find it up to date.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 60)],
                                              ofItemAtPath: project.directory.file("big.bin"))
        hasher.arm(loop: try EventLoop())
        let rerun = try await project.run(jobs: 3, loop: hasher.loop, react: seeing)
        let events = rerun.observer.events
        let one = try #require(events.firstIndex { if case .output(task: "chatty", line: "one") = $0 { true } else { false } })
        let two = try #require(events.firstIndex { if case .output(task: "chatty", line: "two") = $0 { true } else { false } })
        let chattyDone = try #require(events.firstIndex { if case .transition(let t) = $0 { t.task == "chatty" && t.to == .succeeded } else { false } })
        let bigDone = try #require(events.firstIndex { if case .transition(let t) = $0 { t.task == "big" && t.to.isTerminal } else { false } })
        // `one` and `two` came through while `big` was still being checked, and so did `chatty`'s end.
        #expect(one < two && two < chattyDone)
        #expect(chattyDone < bigDone, "\(rerun.observer.transitionLines)")
        #expect(rerun.observer.finalState(of: "big") == .upToDate)
        #expect(hasher.gatedReads == 2)
    }

    /// A task found out of date before the run, whose last success its start withdraws (a commit), starts
    /// on a worker when the loop is what starts it: here once `slot` ends, with `--jobs 1`, which it does
    /// once its line came through the loop (so the thread that started it has long moved on).
    @Test func aStartThatCommitsIsNeverRecordedOnTheLoopsThread() async throws {
        let project = try Project("""
            version: 1
            tasks:
              slot: {run: "echo up; until [ -e go ]; do sleep 0.01; done", priority: high}
              changed: {run: "cat source.txt > made.txt", inputs: [source.txt], outputs: [made.txt]}
            """)
        defer { project.remove() }
        try project.directory.write("first", to: "source.txt")
        _ = try await project.run(jobs: 1, react: { event, _ in
            if case .output(task: "slot", line: "up") = event { try? project.directory.write("", to: "go") }
        })
        try FileManager.default.removeItem(atPath: project.directory.file("go"))
        try project.directory.write("second", to: "source.txt")
        let loop = try EventLoop()
        let noted = Locked<[String]>([])
        let run = try await project.run(jobs: 1, loop: loop, react: { event, _ in
            if case .output(task: "slot", line: "up") = event { try? project.directory.write("", to: "go") }
        }, history: { ThreadNotingHistory($0, loop: loop, noted: noted) })
        #expect(run.observer.finalState(of: "changed") == .succeeded)
        #expect(project.directory.read("made.txt") == "second")
        #expect(noted.withLock { $0 } == ["changed: commits, not on the loop"])
    }

    @Test func measuredMediansFollowTheRealDurations() async throws {
        let project = try Project("""
            version: 1
            tasks:
              slow: {run: "sleep 0.3"}
              fast: {run: "true"}
            """)
        defer { project.remove() }
        for _ in 0..<3 { _ = try await project.run() }
        let medians = try project.store.medianDurations(pipelineFile: "pipeline.yaml")
        let slow = try #require(medians["slow"])
        let fast = try #require(medians["fast"])
        #expect(slow >= 0.3 && slow < 3)
        #expect(fast < slow)
    }
}

/// A scratch folder with `pipeline.yaml` and its state store, run again and again through the Runner.
/// `chains` chains of `length` tasks `tC-L`: the first reads `src-C.txt`, each writes `out/C-L.txt`, which
/// the next in its chain reads and needs.
private func chainsYAML(chains: Int, length: Int) -> String {
    var yaml = "version: 1\ntasks:\n"
    for chain in 0..<chains {
        for link in 0..<length {
            let input = link == 0 ? "src-\(chain).txt" : "out/\(chain)-\(link - 1).txt"
            let needs = link == 0 ? "" : "needs: [t\(chain)-\(link - 1)], "
            yaml += "  t\(chain)-\(link): {\(needs)run: \"mkdir -p out && cat \(input) > out/\(chain)-\(link).txt\", "
                + "inputs: [\(input)], outputs: [out/\(chain)-\(link).txt]}\n"
        }
    }
    return yaml
}

private struct Project {
    let directory: ScratchDirectory
    let graph: TaskGraph
    let store: StateStore

    init(_ yaml: String, hasher: GatedHasher? = nil) throws {
        directory = try ScratchDirectory("jobgraph-history-run")
        hasher?.directory = directory
        try directory.write(yaml, to: "pipeline.yaml")
        var diagnostics = Diagnostics()
        let checked = PipelineCheck.graph(yaml: yaml, file: directory.file("pipeline.yaml"), diagnostics: &diagnostics)
        #expect(diagnostics.all.isEmpty, "\(diagnostics.all)")
        graph = try #require(checked)
        store = try StateStore.open(directory: directory.path, fingerprinter: hasher.map { Fingerprinter(hasher: $0) } ?? Fingerprinter())
    }

    struct Run {
        var id: RunID
        var summary: RunSummary
        var observer: RecordingObserver
        var problems: [String]
    }

    /// One run through a new Runner and RunRecorder, as `jobgraph run` does, holding the run lock.
    /// - Parameters:
    ///   - loop: the event loop the tasks run on, which the run stops; a new one by default.
    ///   - history: what the Runner gets as its history, given the run's recorder; the recorder itself by default.
    func run(jobs: Int = 2, force: Bool = false, loop: EventLoop? = nil,
             react: (RunEvent, Runner) async -> Void = { _, _ in },
             history: (RunRecorder) -> any TaskHistory = { $0 }) async throws -> Run {
        let lock = try store.acquireRunLock(for: "p.yaml")
        defer { lock.release() }
        var configuration = RunConfiguration(
            jobs: jobs, pipelineDirectory: directory.path, stateDirectory: directory.file(".jobgraph"),
            environment: ["PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C"], terminationGrace: 2, processorCount: 2)
        configuration.force = force
        let recorder = try RunRecorder(store: store, pipelineFile: graph.pipeline.file, pipelineDirectory: directory.path,
                                       taskCount: graph.nodes.count, startTime: Date())
        let loop = try loop ?? EventLoop()
        defer { loop.stop() }
        let runner = Runner(graph: graph, configuration: configuration,
                            executor: LocalExecutor(loop: loop, logDirectory: configuration.logDirectory),
                            history: history(recorder))
        let observer = RecordingObserver()
        async let summary = runner.run()
        for await event in runner.events {
            observer.observe(event)
            await react(event, runner)
        }
        let result = await summary
        let problems = recorder.finish(result, endTime: Date())
        let id = try #require(try store.recentRuns().first?.id)
        return Run(id: id, summary: result, observer: observer, problems: problems)
    }

    func remove() { directory.remove() }
}

/// Hashes from disk; for one file it first creates `hashing` beside the pipeline, and once armed it holds
/// its answer until `open()`, unless it runs on the armed loop's thread, where holding it would stop the
/// very events that open it.
private final class GatedHasher: FileHasher, @unchecked Sendable {
    // `@unchecked`: `directory` is set once before any hash; the rest is behind locks.
    private let gated: String
    var directory: ScratchDirectory?
    private let armed = Locked<EventLoop?>(nil)
    private let gate = DispatchSemaphore(value: 0)
    private let reads = Locked(0)

    init(gated: String) { self.gated = gated }

    var loop: EventLoop? { armed.withLock { $0 } }
    var gatedReads: Int { reads.withLock { $0 } }

    /// From now on the gated file's hash waits for `open()`, unless it is made on `loop`'s thread.
    func arm(loop: EventLoop) { armed.withLock { $0 = loop } }

    /// Lets a waiting hash answer; does nothing before `arm`.
    func open() {
        if loop != nil { gate.signal() }
    }

    func sha256(ofFileAt path: String) throws -> String {
        guard let directory, path == directory.file(gated) else { return try DiskFileHasher().sha256(ofFileAt: path) }
        reads.withLock { $0 += 1 }
        try directory.write("", to: "hashing")
        let digest = try DiskFileHasher().sha256(ofFileAt: path)
        if let loop = armed.withLock({ $0 }), !loop.isCurrentThread { gate.wait() }
        return digest
    }
}

/// A run's history that notes, for each start that commits, whether it was recorded on the loop's thread.
private struct ThreadNotingHistory: TaskHistory {
    let recorder: RunRecorder
    let loop: EventLoop
    let noted: Locked<[String]>

    init(_ recorder: RunRecorder, loop: EventLoop, noted: Locked<[String]>) {
        self.recorder = recorder
        self.loop = loop
        self.noted = noted
    }

    func check(_ work: TaskWork, inputs: [String], outputs: [String], environmentNames: [String]) -> UpToDateAnswer {
        recorder.check(work, inputs: inputs, outputs: outputs, environmentNames: environmentNames)
    }

    func makeBatchCheck() -> (any UpToDateBatchChecking)? { recorder.makeBatchCheck() }

    func startCommits(answer: UpToDateAnswer?) -> Bool { recorder.startCommits(answer: answer) }

    func started(_ task: TaskID, answer: UpToDateAnswer?) {
        if recorder.startCommits(answer: answer) {
            let thread = loop.isCurrentThread ? "on the loop" : "not on the loop"
            noted.withLock { $0.append("\(task): commits, \(thread)") }
        }
        recorder.started(task, answer: answer)
    }

    func ended(_ task: TaskID, state: TaskState, attempts: Int, duration: Double?, exitCode: Int32?, answer: UpToDateAnswer?) {
        recorder.ended(task, state: state, attempts: attempts, duration: duration, exitCode: exitCode, answer: answer)
    }
}

/// A run's history whose check before the run notes each task it checks.
private struct BatchNotingHistory: TaskHistory {
    let recorder: RunRecorder
    let checked: Locked<[String]>

    init(_ recorder: RunRecorder, checked: Locked<[String]>) {
        self.recorder = recorder
        self.checked = checked
    }

    func check(_ work: TaskWork, inputs: [String], outputs: [String], environmentNames: [String]) -> UpToDateAnswer {
        recorder.check(work, inputs: inputs, outputs: outputs, environmentNames: environmentNames)
    }

    func makeBatchCheck() -> (any UpToDateBatchChecking)? {
        recorder.makeBatchCheck().map { NotingBatch(batch: $0, checked: checked) }
    }

    func startCommits(answer: UpToDateAnswer?) -> Bool { recorder.startCommits(answer: answer) }

    func started(_ task: TaskID, answer: UpToDateAnswer?) { recorder.started(task, answer: answer) }

    func ended(_ task: TaskID, state: TaskState, attempts: Int, duration: Double?, exitCode: Int32?, answer: UpToDateAnswer?) {
        recorder.ended(task, state: state, attempts: attempts, duration: duration, exitCode: exitCode, answer: answer)
    }

    private final class NotingBatch: UpToDateBatchChecking {
        let batch: any UpToDateBatchChecking
        let checked: Locked<[String]>

        init(batch: any UpToDateBatchChecking, checked: Locked<[String]>) {
            self.batch = batch
            self.checked = checked
        }

        func makeLanes(_ count: Int) -> [any UpToDateBatchLane] {
            batch.makeLanes(count).map { NotingLane(lane: $0, checked: checked) }
        }

        func hasSuccess(of task: TaskID) -> Bool { batch.hasSuccess(of: task) }

        func merge(_ lanes: [any UpToDateBatchLane]) { batch.merge(lanes.compactMap { ($0 as? NotingLane)?.lane }) }

        func finish() { batch.finish() }
    }

    private final class NotingLane: UpToDateBatchLane {
        let lane: any UpToDateBatchLane
        let checked: Locked<[String]>

        init(lane: any UpToDateBatchLane, checked: Locked<[String]>) {
            self.lane = lane
            self.checked = checked
        }

        func check(_ work: TaskWork, inputs: [String], outputs: [String], environmentNames: [String]) -> UpToDateAnswer {
            checked.withLock { $0.append(work.id.rawValue) }
            return lane.check(work, inputs: inputs, outputs: outputs, environmentNames: environmentNames)
        }
    }
}
