import PipelineModel
import Testing
@testable import Execution

/// When a run counts as a build whose rerun may replay it: every task done, nothing else to tell.
@Suite struct RunSummaryTests {
    private func summary(_ counts: [TaskState: Int], failures: [RunSummary.FailedTask] = [], stop: RunStop? = nil) -> RunSummary {
        RunSummary(counts: counts, wallTime: 1, criticalPath: [], failures: failures, stop: stop)
    }

    @Test func everyTaskSucceededOrUpToDateIsABuildDone() {
        #expect(summary([.succeeded: 2, .upToDate: 1]).endedWithEveryTaskDone(taskCount: 3))
        #expect(summary([.upToDate: 3]).endedWithEveryTaskDone(taskCount: 3))
        #expect(!summary([.succeeded: 2]).endedWithEveryTaskDone(taskCount: 3), "a task not counted as done")
        #expect(!summary([.succeeded: 2, .skipped: 1]).endedWithEveryTaskDone(taskCount: 3))
    }

    @Test func anAllowedFailureAStopOrAProcessLeftBehindIsNot() {
        let allowed = RunSummary.FailedTask(id: "lint", exitCode: 1, reason: "exit 1", allowed: true, logPath: "", lastLines: [])
        #expect(!summary([.succeeded: 3], failures: [allowed]).endedWithEveryTaskDone(taskCount: 3))
        #expect(!summary([.succeeded: 3], stop: .interrupt).endedWithEveryTaskDone(taskCount: 3))
        var leftBehind = summary([.succeeded: 3])
        leftBehind.leftBehind = [RunSummary.LeftBehind(task: "serve", processCount: 1)]
        #expect(!leftBehind.endedWithEveryTaskDone(taskCount: 3))
    }
}
