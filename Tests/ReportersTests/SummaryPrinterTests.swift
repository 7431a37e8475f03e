import Testing
@testable import Execution
import PipelineModel
import Reporters

@Suite struct SummaryPrinterTests {
    @Test func rendersCountsCriticalPathFailuresAndTheirLogs() {
        let summary = RunSummary(
            counts: [.skipped: 2, .failed: 2, .succeeded: 3, .upToDate: 0, .pending: 1],
            wallTime: 4.2,
            criticalPath: ["fetch", "build", "test"],
            failures: [
                .init(id: "test", exitCode: 1, reason: "", allowed: false, logPath: ".jobgraph/logs/test.log",
                      lastLines: ["FAIL: testAdd", "expected 2, got 3"]),
                .init(id: "lint", exitCode: nil, reason: "timed out after 10s", allowed: true,
                      logPath: ".jobgraph/logs/lint.log", lastLines: []),
            ],
            stop: .interrupt)

        #expect(SummaryPrinter().render(summary) == [
            "3 succeeded, 2 failed, 2 skipped, 1 pending in 4.20s",
            "critical path: fetch -> build -> test",
            "test failed: exit 1  (log: .jobgraph/logs/test.log)",
            "    FAIL: testAdd",
            "    expected 2, got 3",
            "lint failed (allowed): timed out after 10s  (log: .jobgraph/logs/lint.log)",
            "interrupted by SIGINT",
        ])
    }

    @Test func aCleanRunIsOneOrTwoLines() {
        let summary = RunSummary(counts: [.upToDate: 4, .succeeded: 1], wallTime: 75, criticalPath: ["only"],
                                 failures: [], stop: nil)
        #expect(SummaryPrinter().render(summary) == ["1 succeeded, 4 up-to-date in 1m15s", "critical path: only"])
    }

    @Test func processesLeftBehindAreCountedByTaskBeforeTheStop() {
        var summary = RunSummary(counts: [.succeeded: 2], wallTime: 1, criticalPath: [], failures: [], stop: .terminate)
        summary.leftBehind = [.init(task: "daemon", processCount: 2), .init(task: "photo[3]", processCount: 1),
                              .init(task: nil, processCount: 1)]
        #expect(SummaryPrinter().render(summary) == [
            "2 succeeded in 1.00s",
            "2 processes left behind by task `daemon` were stopped",
            "1 process left behind by task `photo[3]` was stopped",
            "1 process left behind by an unknown task was stopped",
            "terminated by SIGTERM",
        ])
    }

    @Test func anEmptyTerminatedRunSaysSo() {
        let summary = RunSummary(counts: [:], wallTime: 0.004, criticalPath: [], failures: [], stop: .terminate)
        #expect(SummaryPrinter().render(summary) == ["no tasks ran in 0.00s", "terminated by SIGTERM"])
    }
}
