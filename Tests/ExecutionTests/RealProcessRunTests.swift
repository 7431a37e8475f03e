import Execution
import Foundation
import JobGraphBasics
import JobGraphSystem
import JobGraphTestSupport
import PipelineModel
import Steps
import Synchronization
import TaskGraph
import Testing

/// The run engine against the contract ("Scheduling rules", "Task states", "Exit codes and signals") with
/// real processes: `Runner` + `LocalExecutor` + `EventLoop` on pipelines written as YAML. Every assertion
/// reads the event stream; the tasks wait on files the test creates when an event arrives, never on time.
@Suite(.hangLimit(minutes: 1))
struct RealProcessRunTests {
    @Test func aTaskStartsOnlyAfterEveryNeedHasEnded() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              a: {run: "echo a > a.out"}
              b: {needs: [a], run: "test -e a.out && echo b > b.out"}
              c: {needs: [a], run: "test -e a.out && echo c > c.out"}
              d: {needs: [b, c], run: "test -e b.out && test -e c.out"}
              e: {run: "true"}
            """, jobs: 4)
        #expect(run.summary?.counts[.succeeded] == 5)
        let needs: [TaskID: [TaskID]] = ["b": ["a"], "c": ["a"], "d": ["b", "c"]]
        for (task, taskNeeds) in needs {
            let started = try #require(run.index(of: task, from: .ready, to: .executing))
            for need in taskNeeds {
                let ended = try #require(run.terminalIndex(of: need))
                #expect(ended < started, "\(task) started before \(need) ended")
            }
        }
    }

    @Test func everyTaskSeesThePipelineEnvironmentItsOwnAndItsMark() async throws {
        // Tasks without an `env` of their own (or a var of their own) share one encoded environment; one
        // with its own gets it on top. Either way the child sees the caller's PATH, the pipeline's `env` and
        // exported vars, and its mark. `direct` names `WHERE` only as a word, so only `export` gives it.
        let run = try await RealRun.run("""
            version: 1
            vars: {WHERE: here, UNUSED: nowhere}
            export: [WHERE]
            env: {SHARED: pipeline}
            tasks:
              plain: {run: "echo \\"$SHARED $WHERE $JOBGRAPH_TASK ${OWN:-none}\\" > plain.out"}
              own: {env: {OWN: mine, SHARED: overridden}, run: "echo \\"$SHARED $WHERE $JOBGRAPH_TASK $OWN\\" > own.out"}
              direct: {run: printenv SHARED WHERE JOBGRAPH_TASK}
              unused: {run: "! printenv UNUSED"}
            """, jobs: 2)
        // `unused` names no var: `UNUSED` is not in its environment.
        #expect(run.summary?.counts[.succeeded] == 4)
        #expect(run.directory.read("plain.out") == "pipeline here plain none\n")
        #expect(run.directory.read("own.out") == "overridden here own mine\n")
        let printed = run.observer.events.compactMap { event -> String? in
            if case .output(task: "direct", let line) = event { line } else { nil }
        }
        #expect(printed == ["pipeline", "here", "direct"])
    }

    @Test func onAQueueOfOneHigherPriorityStartsFirst() async throws {
        let run = try await RealRun.run("""
            version: 1
            queues:
              solo: {max_concurrent: 1}
            tasks:
              p-normal: {queue: solo, run: "echo p-normal >> order.txt"}
              p-very-low: {queue: solo, priority: very-low, run: "echo p-very-low >> order.txt"}
              p-high: {queue: solo, priority: high, run: "echo p-high >> order.txt"}
              p-low: {queue: solo, priority: low, run: "echo p-low >> order.txt"}
              p-very-high: {queue: solo, priority: very-high, run: "echo p-very-high >> order.txt"}
            """, jobs: 1)
        let expected = ["p-very-high", "p-high", "p-normal", "p-low", "p-very-low"]
        #expect(run.observer.transitions.filter { $0.to == .executing }.map(\.task.rawValue) == expected)
        #expect(run.directory.read("order.txt") == expected.joined(separator: "\n") + "\n")
    }

    @Test func jobsAndQueueLimitsAreNeverExceededAndAreReached() async throws {
        // Each task waits until three tasks have started: the first wave (two `net` tasks by priority, then
        // one default) must be executing at once, or the run times out (a hang guard, not a wait).
        let barrier = "mktemp started/x.XXXXXX > /dev/null; until [ $(ls started | wc -l) -ge 3 ]; do sleep 0.01; done"
        let tasks = (1...4).map { "  n\($0): {queue: net, priority: high, timeout: 300s, run: \"\(barrier)\"}" }
            + (1...4).map { "  c\($0): {timeout: 300s, run: \"\(barrier)\"}" }
        let run = try await RealRun.run("""
            version: 1
            queues:
              net: {max_concurrent: 2}
            tasks:
            \(tasks.joined(separator: "\n"))
            """, jobs: 3, prepare: { directory in
            try FileManager.default.createDirectory(atPath: directory.file("started"), withIntermediateDirectories: false)
        })
        #expect(run.summary?.counts[.succeeded] == 8)
        #expect(run.maximumExecuting() == 3)
        #expect(run.maximumExecuting(queue: "net") == 2)
    }

    @Test func qualityOfServiceSetsTheNicenessOfTheProcess() async throws {
        let run = try await RealRun.run("""
            version: 1
            queues:
              slow: {qos: background}
              tools: {qos: utility}
            tasks:
              on-background-queue: {queue: slow, run: nice}
              on-utility-queue: {queue: tools, run: nice}
              own-qos-wins: {queue: tools, qos: background, run: nice}
              utility-task: {qos: utility, run: nice}
              interactive-task: {qos: user-interactive, run: nice}
            """, jobs: 2)
        #expect(run.output(of: "on-background-queue") == ["19"])
        #expect(run.output(of: "on-utility-queue") == ["10"])
        #expect(run.output(of: "own-qos-wins") == ["19"])
        #expect(run.output(of: "utility-task") == ["10"])
        // Niceness 0 is not set but inherited: whatever this test process runs with.
        #expect(run.output(of: "interactive-task") == ["\(ProcessTable.ownNiceness)"])
    }

    /// `broken` fails at once, while the tasks started with it still run: those must appear started before
    /// the failure, since the Plan started them first.
    private static let failingPipeline = """
        version: 1
        tasks:
          broken: {priority: very-high, run: "exit 5"}
          running: {priority: high, run: "until [ -e release ]; do sleep 0.01; done"}
          running-2: {priority: high, run: "until [ -e release ]; do sleep 0.01; done"}
          running-3: {priority: high, run: "until [ -e release ]; do sleep 0.01; done"}
          running-4: {priority: high, run: "until [ -e release ]; do sleep 0.01; done"}
          running-5: {priority: high, run: "until [ -e release ]; do sleep 0.01; done"}
          running-6: {priority: high, run: "until [ -e release ]; do sleep 0.01; done"}
          unrelated: {priority: low, run: "touch unrelated.ran"}
          dependent: {needs: [broken], run: "touch dependent.ran"}
          after-running: {needs: [running], run: "touch after-running.ran"}
          rescue: {needs: [broken], when: failure, run: "echo rescuing"}
          cleanup: {needs: [broken, running], when: always, run: "echo cleaning"}
        """

    /// Lets `running` end once `broken` has failed, so it is executing when the failure happens.
    private static func releaseOnFailure(_ event: RunEvent, _ runner: Runner, _ directory: ScratchDirectory) throws {
        if case .transition(let transition) = event, transition.task == "broken", transition.to == .failed {
            try directory.write("", to: "release")
        }
    }

    @Test func afterAFailureOnlyFailureAndAlwaysTasksStartAndTheRestIsCancelled() async throws {
        let run = try await RealRun.run(Self.failingPipeline, jobs: 7, react: Self.releaseOnFailure)
        let failed = try #require(run.index(of: "broken", from: .executing, to: .failed))
        let startedAfter = run.observer.transitions[(failed + 1)...].filter { $0.to == .executing }.map(\.task)
        #expect(Set(startedAfter) == ["rescue", "cleanup"])
        #expect(run.finalStates == [
            "broken": .failed, "running": .succeeded, "running-2": .succeeded, "running-3": .succeeded,
            "running-4": .succeeded, "running-5": .succeeded, "running-6": .succeeded,
            "unrelated": .cancelled, "dependent": .skipped,
            "after-running": .cancelled, "rescue": .succeeded, "cleanup": .succeeded,
        ])
        #expect(!run.directory.exists("unrelated.ran"))
        #expect(run.summary?.hasFailures == true)
        #expect(run.summary?.failures.map(\.exitCode) == [5])
    }

    @Test func keepGoingStartsEverythingThatDoesNotDependOnTheFailure() async throws {
        let run = try await RealRun.run(Self.failingPipeline, jobs: 7, keepGoing: true, react: Self.releaseOnFailure)
        #expect(run.finalStates == [
            "broken": .failed, "running": .succeeded, "running-2": .succeeded, "running-3": .succeeded,
            "running-4": .succeeded, "running-5": .succeeded, "running-6": .succeeded,
            "unrelated": .succeeded, "dependent": .skipped,
            "after-running": .succeeded, "rescue": .succeeded, "cleanup": .succeeded,
        ])
        #expect(!run.directory.exists("dependent.ran"))
        #expect(run.summary?.hasFailures == true)
    }

    @Test func whenRulesDecideFromWhatTheNeedsDid() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              good: {run: "true"}
              bad: {run: "exit 1"}
              success-after-good: {needs: [good], run: "true"}
              failure-after-good: {needs: [good], when: failure, run: "true"}
              always-after-good: {needs: [good], when: always, run: "true"}
              success-after-bad: {needs: [bad], run: "true"}
              failure-after-bad: {needs: [bad], when: failure, run: "true"}
              always-after-bad: {needs: [bad], when: always, run: "true"}
              success-after-both: {needs: [good, bad], run: "true"}
              failure-after-both: {needs: [good, bad], when: failure, run: "true"}
            """, jobs: 2, keepGoing: true)
        #expect(run.finalStates == [
            "good": .succeeded, "bad": .failed,
            "success-after-good": .succeeded, "failure-after-good": .skipped, "always-after-good": .succeeded,
            "success-after-bad": .skipped, "failure-after-bad": .succeeded, "always-after-bad": .succeeded,
            "success-after-both": .skipped, "failure-after-both": .succeeded,
        ])
    }

    @Test func retriesRunAgainWithTheNextAttemptNumberAndOneLog() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              flaky:
                retries: 2
                retry_delay: 10ms
                run: n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n > count; echo "try $n"; [ $n -ge 3 ]
              hopeless: {retries: 1, retry_delay: 10ms, run: "echo nope; exit 2"}
            """, jobs: 2, keepGoing: true)
        let flaky = run.observer.transitions.filter { $0.task == "flaky" }
        #expect(flaky.map { "\($0.from.rawValue)->\($0.to.rawValue)#\($0.attempt)" } == [
            "pending->ready#1", "ready->executing#1", "executing->failed#1", "failed->executing#2",
            "executing->failed#2", "failed->executing#3", "executing->succeeded#3",
        ])
        #expect(run.directory.read(".jobgraph/logs/flaky.log") == "try 1\n--- attempt 2 ---\ntry 2\n--- attempt 3 ---\ntry 3\n")
        let hopeless = try #require(run.observer.transitions.last { $0.task == "hopeless" })
        #expect(hopeless.to == .failed && hopeless.attempt == 2 && hopeless.exitCode == 2)
        #expect(hopeless.error?.contains("retrying") == false)
        let failure = try #require(run.summary?.failures.first)
        #expect(failure.id == "hopeless" && failure.lastLines == ["nope", "--- attempt 2 ---", "nope"])
    }

    @Test func anAllowedFailureNeitherFailsTheRunNorStopsIt() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              lint: {priority: very-high, allow_failure: true, run: "echo 1 warning; exit 3"}
              after-lint: {needs: [lint], run: "true"}
              other: {priority: low, run: "true"}
            """, jobs: 1)
        #expect(run.finalStates == ["lint": .failed, "after-lint": .succeeded, "other": .succeeded])
        #expect(run.summary?.hasFailures == false)
        let failure = try #require(run.summary?.failures.first)
        #expect(failure.allowed && failure.exitCode == 3 && failure.lastLines == ["1 warning"])
    }

    @Test func aTimeoutFailsTheTaskAndEndsItsProcesses() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              hang: {timeout: 1s, run: "sleep 300.91 & sleep 300.91"}
              next: {needs: [hang], run: "true"}
            """, jobs: 2)
        let failed = try #require(run.observer.transitions.first { $0.task == "hang" && $0.to == .failed })
        #expect(failed.error?.contains("timed out after 1s") == true)
        #expect(failed.exitCode == nil)
        #expect(run.finalStates["next"] == .skipped)
        #expect(await eventually { ProcessTable.living(withArgument: "300.91").isEmpty })
    }

    @Test func interruptStopsEveryProcessAndStillRunsAlwaysTasks() async throws {
        let upLines = Counter()
        let run = try await RealRun.run("""
            version: 1
            tasks:
              one: {run: "echo up; exec sleep 300.92"}
              two: {run: "sh -c 'sleep 300.93 & echo up; sleep 300.93'"}
              after-one: {needs: [one], run: "touch after-one.ran"}
              cleanup: {needs: [one, two], when: always, run: "echo cleaning"}
            """, jobs: 2, react: { event, runner, _ in
            if case .output(_, "up") = event, upLines.increment() == 2 { runner.control(.interrupt) }
        })
        #expect(run.summary?.stop == .interrupt)
        #expect(run.finalStates == ["one": .cancelled, "two": .cancelled, "after-one": .cancelled, "cleanup": .succeeded])
        #expect(run.output(of: "cleanup") == ["cleaning"])
        #expect(!run.directory.exists("after-one.ran"))
        #expect(await eventually {
            ProcessTable.living(withArgument: "300.92").isEmpty && ProcessTable.living(withArgument: "300.93").isEmpty
        })
    }

    @Test func aSecondInterruptKillsWhatIgnoresSIGTERM() async throws {
        // With a grace of ten minutes, only the second interrupt's SIGKILL can end this run in time.
        let run = try await RealRun.run("""
            version: 1
            tasks:
              stubborn: {run: "trap '' TERM; echo up; exec sleep 300.94"}
            """, jobs: 1, grace: 600, react: { event, runner, _ in
            if case .output(_, "up") = event { runner.control(.interrupt) }
            if case .stopping = event { runner.control(.interrupt) }
        })
        #expect(run.summary?.stop == .interrupt)
        #expect(run.finalStates == ["stubborn": .cancelled])
        #expect(await eventually { ProcessTable.living(withArgument: "300.94").isEmpty })
    }

    @Test func suspendHoldsNewTasksAndResumeReleasesThem() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              first: {priority: high, run: "until [ -e go ]; do sleep 0.01; done"}
              second: {run: "touch second.ran"}
            """, jobs: 1, react: { event, runner, directory in
            guard case .transition(let transition) = event, transition.task == "first" else { return }
            if transition.to == .executing {
                runner.control(.suspend)
                try directory.write("", to: "go")
            } else if transition.to.isTerminal {
                // A slot is free and `second` is ready: a runner that ignored the suspension would start it.
                // Its start would be announced before the resumption, under the lock that orders both: the
                // order of the events, checked below, proves that it waited.
                #expect(!directory.exists("second.ran"))
                runner.control(.resume)
            }
        })
        let firstEnded = try #require(run.terminalIndex(of: "first"))
        let resumed = try #require(run.eventIndex { if case .suspended(false) = $0 { true } else { false } })
        let secondStarted = try #require(run.eventIndex {
            if case .transition(let transition) = $0 { transition.task == "second" && transition.to == .executing } else { false }
        })
        #expect(run.eventIndex { if case .suspended(true) = $0 { true } else { false } } != nil)
        #expect(firstEnded < resumed)
        #expect(resumed < secondStarted)
        #expect(run.finalStates == ["first": .succeeded, "second": .succeeded])
    }

    @Test func anInterruptWhileSuspendedStillRunsAlwaysTasksAndEnds() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              long: {run: "echo up; exec sleep 300.95"}
              cleanup: {needs: [long], when: always, run: "echo cleaning"}
            """, jobs: 2, react: { event, runner, _ in
            if case .output(_, "up") = event {
                runner.control(.suspend)
                runner.control(.interrupt)
            }
        })
        #expect(run.summary?.stop == .interrupt)
        #expect(run.finalStates == ["long": .cancelled, "cleanup": .succeeded])
        #expect(await eventually { ProcessTable.living(withArgument: "300.95").isEmpty })
    }
}

/// One run of a YAML pipeline with real processes in a scratch directory, and everything it reported.
struct RealRun {
    let directory: ScratchDirectory
    let observer: RecordingObserver
    /// `nil` when the test was cancelled (its time limit passed) before the run ended.
    let summary: RunSummary?
    /// Removes the directory when the last copy of this run is gone, after the test's assertions.
    private let cleanup: Cleanup

    /// Runs `yaml` to its end, calling `react` for each event as it arrives (before the next is read).
    /// - Parameters:
    ///   - configure: adjusts the run's configuration before it starts.
    ///   - prepare: called before the run, to create what the tasks expect to find.
    ///   - grace: seconds between SIGTERM and SIGKILL when tasks are stopped.
    static func run(
        _ yaml: String, jobs: Int, keepGoing: Bool = false, grace: Double = 5,
        configure: (inout RunConfiguration) -> Void = { _ in },
        prepare: (ScratchDirectory) throws -> Void = { _ in },
        react: (RunEvent, Runner, ScratchDirectory) async throws -> Void = { _, _, _ in }
    ) async throws -> RealRun {
        let directory = try ScratchDirectory("jobgraph-run")
        let cleanup = Cleanup(directory)
        try prepare(directory)
        var diagnostics = Diagnostics()
        let graph = PipelineCheck.graph(yaml: yaml, file: directory.file("pipeline.yaml"), diagnostics: &diagnostics)
        #expect(diagnostics.all.isEmpty, "\(diagnostics.all)")
        let checked = try #require(graph)
        var configuration = RunConfiguration(
            jobs: jobs, keepGoing: keepGoing, pipelineDirectory: directory.path, stateDirectory: directory.file(".jobgraph"),
            environment: ["PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C"], terminationGrace: grace, processorCount: 2)
        configure(&configuration)
        let loop = try EventLoop()
        // Stopping the loop kills whatever a failed test left running.
        defer { loop.stop() }
        let runner = Runner(graph: checked, configuration: configuration,
                            executor: LocalExecutor(loop: loop, logDirectory: configuration.logDirectory))
        let observer = RecordingObserver()
        // Unstructured, so a test cancelled by its time limit does not wait for a run that never ends.
        let running = Task { await runner.run() }
        for await event in runner.events {
            observer.observe(event)
            try await react(event, runner, directory)
        }
        let summary = Task.isCancelled ? nil : await running.value
        return RealRun(directory: directory, observer: observer, summary: summary, cleanup: cleanup)
    }

    /// The last state of every task that had a transition.
    var finalStates: [TaskID: TaskState] {
        var states: [TaskID: TaskState] = [:]
        for transition in observer.transitions { states[transition.task] = transition.to }
        return states
    }

    /// Index in `observer.transitions` of the first `from -> to` of `task`.
    func index(of task: TaskID, from: TaskState, to: TaskState) -> Int? {
        observer.transitions.firstIndex { $0.task == task && $0.from == from && $0.to == to }
    }

    /// Index in `observer.transitions` of the last transition of `task` to a terminal state.
    func terminalIndex(of task: TaskID) -> Int? {
        observer.transitions.lastIndex { $0.task == task && $0.to.isTerminal }
    }

    /// Index in `observer.events` of the first event that matches.
    func eventIndex(_ matches: (RunEvent) -> Bool) -> Int? {
        observer.events.firstIndex(where: matches)
    }

    /// Every line `task` printed, in order.
    func output(of task: TaskID) -> [String] {
        observer.events.compactMap { if case .output(task, let line) = $0 { line } else { nil } }
    }

    /// The most tasks executing at once, overall or on one queue, counted from the transitions.
    func maximumExecuting(queue: String? = nil) -> Int {
        var executing = 0, maximum = 0
        for transition in observer.transitions where queue == nil || transition.queue == queue {
            if transition.to == .executing { executing += 1 }
            if transition.from == .executing { executing -= 1 }
            maximum = max(maximum, executing)
        }
        return maximum
    }
}

/// Removes a scratch directory on deinit.
private final class Cleanup {
    let directory: ScratchDirectory
    init(_ directory: ScratchDirectory) { self.directory = directory }
    deinit { directory.remove() }
}

/// A count shared with an event callback.
final class Counter: Sendable {
    private let value = Mutex(0)

    /// Adds one and returns the new count.
    func increment() -> Int {
        value.withLock { value in
            value += 1
            return value
        }
    }
}
