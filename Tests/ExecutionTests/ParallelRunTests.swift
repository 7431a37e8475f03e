import Execution
import Foundation
import JobGraphTestSupport
import PipelineModel
import Testing

/// `parallel:` with real processes (contract: "parallel"; BlockOperation's execution blocks): the commands
/// of one task run concurrently, each process counted against `--jobs`; the task fails if any fails, and
/// then the others are terminated.
@Suite(.hangLimit(minutes: 1))
struct ParallelRunTests {
    /// The files in `directory` whose names start with `prefix`.
    private static func count(_ prefix: String, in directory: ScratchDirectory) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasPrefix(prefix) }.count
    }

    @Test func theCommandsRunAtTheSameTimeAndTheTaskEndsWhenAllHave() async throws {
        // Each command waits until all three have started: run one after another, they would never end.
        let barrier = "until [ $(ls started.* | wc -l) -ge 3 ]; do sleep 0.01; done"
        let run = try await RealRun.run("""
            version: 1
            tasks:
              checks:
                timeout: 300s
                parallel:
                  - touch started.lint; \(barrier); echo lint done
                  - touch started.unit; \(barrier); echo unit done
                  - touch started.docs; \(barrier); sleep 0.2; echo docs done
              after: {needs: [checks], run: "echo after"}
            """, jobs: 3)
        #expect(run.finalStates == ["checks": .succeeded, "after": .succeeded])
        #expect(Set(run.output(of: "checks")) == ["lint done", "unit done", "docs done"])
        // The task ends once its slowest command has.
        let docsDone = try #require(run.eventIndex { if case .output("checks", "docs done") = $0 { true } else { false } })
        let ended = try #require(run.eventIndex {
            if case .transition(let transition) = $0 { transition.task == "checks" && transition.to.isTerminal } else { false }
        })
        #expect(docsDone < ended)
    }

    @Test func oneFailingCommandFailsTheTaskAndTerminatesTheOthers() async throws {
        let upLines = Counter()
        let run = try await RealRun.run("""
            version: 1
            tasks:
              checks:
                parallel:
                  - trap 'touch terminated.1; exit 0' TERM; echo up; sleep 300.631 & wait
                  - trap 'touch terminated.2; exit 0' TERM; echo up; sleep 300.632 & wait
                  - until [ -e go ]; do sleep 0.01; done; exit 4
              after: {needs: [checks], run: "echo after"}
            """, jobs: 3, grace: 3600, react: { event, _, directory in
            if case .output("checks", "up") = event, upLines.increment() == 2 { try directory.write("", to: "go") }
        })
        #expect(run.finalStates == ["checks": .failed, "after": .skipped])
        let failed = try #require(run.transition(of: "checks", to: .failed))
        #expect(failed.exitCode == 4)
        #expect(failed.error == "`until [ -e go ]; do sleep 0.01; done; exit 4` exited with code 4")
        // SIGTERM ended them (each noted it), and the task ended once they had: with an hour's grace, a
        // runner waiting for the grace to run out would have hit the suite's time limit instead.
        #expect(run.directory.exists("terminated.1") && run.directory.exists("terminated.2"))
        #expect(ProcessTable.living(withArgument: "300.631").isEmpty)
        #expect(ProcessTable.living(withArgument: "300.632").isEmpty)
    }

    @Test func aGroupRunsNoMoreProcessesAtOnceThanJobsAndReachesThatMany() async throws {
        // Four commands, two jobs: two start and wait for `go`. That no third starts meanwhile, the step
        // proves (`ShellStepTests`), given the limit the run gives it (`WorkResolverTests`); here, that the
        // run reaches two at once and ends with all four.
        let wait = "until [ -e go ]; do sleep 0.01; done"
        let run = try await RealRun.run("""
            version: 1
            tasks:
              group:
                timeout: 300s
                parallel:
                  - touch started.1; \(wait)
                  - touch started.2; \(wait)
                  - touch started.3; \(wait)
                  - touch started.4; \(wait)
            """, jobs: 2, react: { event, _, directory in
            guard case .transition(let transition) = event, transition.task == "group", transition.to == .executing else { return }
            #expect(await eventually { Self.count("started.", in: directory) >= 2 })
            #expect(Self.count("started.", in: directory) == 2)
            try directory.write("", to: "go")
        })
        #expect(run.finalStates == ["group": .succeeded])
        #expect(Self.count("started.", in: run.directory) == 4)
    }

    @Test func aGroupHoldsOneJobPerProcessSoOtherTasksWait() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              pair:
                priority: high
                parallel: ["sleep 0.1", "sleep 0.1"]
              trio:
                priority: low
                parallel: ["true", "true", "true"]
              single: {run: "true"}
            """, jobs: 2)
        #expect(run.finalStates == ["pair": .succeeded, "trio": .succeeded, "single": .succeeded])
        // `pair` takes both jobs; `trio` takes both (not three) and runs alone too.
        #expect(run.maximumExecuting() == 1)
        #expect(run.startOrder { _ in true } == ["pair", "single", "trio"])
    }

    @Test func aStoppedGroupStartsNoMoreCommands() async throws {
        // Two jobs: the first two commands run; the first fails, so the rest never start.
        let run = try await RealRun.run("""
            version: 1
            tasks:
              group:
                parallel:
                  - exit 2
                  - echo up; exec sleep 300.633
                  - touch third.ran
                  - touch fourth.ran
            """, jobs: 2)
        #expect(run.finalStates == ["group": .failed])
        #expect(run.transition(of: "group", to: .failed)?.exitCode == 2)
        #expect(!run.directory.exists("third.ran") && !run.directory.exists("fourth.ran"))
        #expect(ProcessTable.living(withArgument: "300.633").isEmpty)
    }
}
