import Foundation
import Testing
import Execution
import JobGraphBasics
import JobGraphTestSupport
import PipelineModel
import TaskGraph
@testable import Reporters

/// The page's content, from a known run: what a reader of the HTML sees, and that nothing the user wrote
/// can become markup.
@Suite struct RunReportPageTests {
    private func page(attempts: [TaskAttempt], states: [TaskID: TaskState], jobs: Int? = 2,
                      resources: [ResourceTotal]? = nil) throws -> String {
        var diagnostics = Diagnostics()
        let graph = try #require(PipelineCheck.graph(yaml: """
            version: 1
            tasks:
              build: {run: "true"}
              test: {needs: [build], run: "true"}
            """, file: "p.yaml", diagnostics: &diagnostics))
        let report = RunReport(pipeline: "p.yaml", run: "3", startedAt: Date(timeIntervalSince1970: 0), wallTime: 4,
                               outcome: "failed", jobs: jobs, counts: [("succeeded", 1), ("failed", 1)], attempts: attempts,
                               criticalPath: ["build", "test"], finalStates: states, resources: resources)
        return RunReportPage(report: report, graph: graph).html()
    }

    @Test func aQuickFailureOnTheCriticalPathKeepsItsColourUnderAThinOutline() throws {
        let html = try page(attempts: [
            TaskAttempt(task: "build", attempt: 1, queue: "default", slot: 0, start: 0, end: 3.999, outcome: .succeeded, exitCode: 0),
            TaskAttempt(task: "test", attempt: 1, queue: "default", slot: 1, start: 3.999, end: 4, outcome: .failed, exitCode: 2),
        ], states: ["build": .succeeded, "test": .failed])
        #expect(html.contains("<rect class=\"bar critical\""))
        #expect(html.contains("<rect class=\"bar critical thin\" x=") && html.contains("rect.bar.critical.thin { stroke-width: 1; }"))
    }

    @Test func barsLanesFailuresAndGraphAreOnThePage() throws {
        let html = try page(attempts: [
            TaskAttempt(task: "build", attempt: 1, queue: "default", slot: 0, start: 0, end: 1.5, outcome: .succeeded, exitCode: 0),
            TaskAttempt(task: "test", attempt: 1, queue: "default", slot: 2, start: 1.5, end: 4, outcome: .failed, exitCode: 2,
                        error: "<script>alert(1)</script> & more", logTail: ["expected <b> to be \"c\""]),
        ], states: ["build": .succeeded, "test": .failed])
        #expect(html.contains("data-lanes=\"3\""), "a lane for slot 3 although --jobs was 2")
        #expect(html.components(separatedBy: "class=\"lane-marker\"").count - 1 == 3)
        #expect(html.components(separatedBy: "<rect class=\"bar critical\"").count - 1 == 2)
        #expect(html.contains("fill=\"\(RunReportPage.color(of: .failed))\" data-tip=\"test · duration 2.50s · exit code 2 · queue default · failed"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; more"))
        #expect(!html.contains("<script>alert"))
        #expect(html.contains("<pre class=\"log\">expected &lt;b&gt; to be &quot;c&quot;</pre>"))
        #expect(html.contains("<svg class=\"graph\""))
        #expect(html.contains("marker-end=\"url(#arrow)\""), "the edge build -> test")
    }

    @Test func aFailureIsDrawnOverTheSuccessThatFollowedItInItsLane() throws {
        // A failure that took a millisecond gets a bar 3 pixels wide; the next attempt in the lane starts inside it.
        let html = try page(attempts: [
            TaskAttempt(task: "test", attempt: 1, queue: "default", slot: 0, start: 0, end: 0.001, outcome: .failed, exitCode: 1),
            TaskAttempt(task: "build", attempt: 1, queue: "default", slot: 0, start: 0.001, end: 4, outcome: .succeeded, exitCode: 0),
        ], states: ["build": .succeeded, "test": .failed])
        let failed = try #require(html.range(of: "fill=\"\(RunReportPage.color(of: .failed))\" data-tip"))
        let succeeded = try #require(html.range(of: "fill=\"\(RunReportPage.color(of: .succeeded))\" data-tip"))
        #expect(succeeded.lowerBound < failed.lowerBound, "SVG paints later shapes over earlier ones")
    }

    @Test func aRunWithoutAttemptsSaysSoInsteadOfAnEmptyTimeline() throws {
        let html = try page(attempts: [], states: ["build": .upToDate, "test": .upToDate])
        #expect(html.contains("No task executed in this run"))
        #expect(!html.contains("class=\"timeline\""))
        #expect(html.contains("No task failed."))
    }

    @Test func resourcesShowEachTotalItsPeakAndOriginAndEachAttemptsAmounts() throws {
        let held = Resources([.init(name: "cpus", value: 2), .init(name: "mem", value: 3 << 29)])
        let html = try page(attempts: [
            TaskAttempt(task: "build", attempt: 1, queue: "default", slot: 0, start: 0, end: 1.5, outcome: .succeeded, exitCode: 0,
                        resources: held),
            TaskAttempt(task: "test", attempt: 1, queue: "default", slot: 2, start: 1, end: 4, outcome: .failed, exitCode: 2,
                        resources: Resources([.init(name: "cpus", value: 1)])),
        ], states: ["build": .succeeded, "test": .failed], resources: [
            ResourceTotal(name: "cpus", total: 4, source: .jobs), ResourceTotal(name: "mem", total: 2 << 30, source: .option),
            ResourceTotal(name: "gpus", total: 1, source: nil),
        ])
        #expect(html.contains("<h2>Resources</h2>"))
        #expect(html.contains("<tr data-resource=\"cpus\"><td>cpus</td><td class=\"peak\"><span class=\"meter\"><i style=\"width:75.0%\"></i></span>3</td>"
                              + "<td class=\"total\">4</td><td>--jobs</td></tr>"), "\(html)")
        #expect(html.contains("<tr data-resource=\"mem\"><td>mem</td><td class=\"peak\"><span class=\"meter\"><i style=\"width:75.0%\"></i></span>1.5G</td>"
                              + "<td class=\"total\">2G</td><td>--resources</td></tr>"))
        #expect(html.contains("<td>gpus</td><td class=\"peak\"><span class=\"meter\"><i style=\"width:0.0%\"></i></span>0</td>"
                              + "<td class=\"total\">1</td><td>not recorded</td>"))
        #expect(html.contains("data-tip=\"build · duration 1.50s · exit code 0 · queue default · succeeded · held cpus 2 · mem 1.5G\""))
        #expect(html.contains("<td>succeeded</td><td>cpus 2 · mem 1.5G</td></tr>") || html.contains("</i>succeeded</td><td>cpus 2 · mem 1.5G</td></tr>"))
        #expect(html.contains("attempt 1 · exit code 2 · held cpus 1</p>"))
        // Without totals (no resources declared), none of it.
        let plain = try page(attempts: [TaskAttempt(task: "build", attempt: 1, queue: "default", slot: 0, start: 0, end: 1, outcome: .succeeded)],
                             states: ["build": .succeeded])
        #expect(!plain.contains("Resources") && !plain.contains("<th>resources</th>"))
    }

    @Test func aRunWhoseAttemptsWereNotRecordedSaysSo() throws {
        let html = try page(attempts: [], states: [:], jobs: nil)
        #expect(html.contains("This run's attempts were not recorded"))
        #expect(!html.contains("--jobs"))
    }
}
