import Execution
import JobGraphBasics
import PipelineModel
import Reporters
import TaskGraph
import Testing

/// `jobgraph explain FILE TASK`: the needs depth first, each task once, each with its verdict.
@Suite struct ExplainPrinterTests {
    @Test func walksTheNeedsDepthFirstNamingEachTaskOnce() throws {
        var diagnostics = Diagnostics()
        let graph = try #require(PipelineCheck.graph(yaml: """
            version: 1
            tasks:
              base: {run: make base}
              left: {run: make left, needs: [base]}
              right: {run: make right, needs: [base]}
              top: {run: make top, needs: [left, right]}
              photo: {run: "echo {{ item }}", foreach: [a, b], needs: [right]}
            """, file: "p.yaml", diagnostics: &diagnostics))
        let index = { (id: String) in try #require(graph.nodes.firstIndex { $0.id.rawValue == id }) }
        var reasons = Array(repeating: RunReason.upToDate, count: graph.nodes.count)
        reasons[try index("right")] = .commandChanged
        reasons[try index("top")] = .needWillRun("right")
        reasons[try index("photo[b]")] = .environmentChanged("FOO")

        #expect(ExplainPrinter().render(graph, reasons: reasons, task: "top") == [
            "top: may run: it needs 'right', which will run",
            "  left: up-to-date",
            "    base: up-to-date",
            "  right: runs because command changed",
        ])
        // A fan-out's name explains each item; what an earlier item showed is not repeated.
        #expect(ExplainPrinter().render(graph, reasons: reasons, task: "photo") == [
            "photo[a]: up-to-date",
            "  right: runs because command changed",
            "    base: up-to-date",
            "photo[b]: runs because environment 'FOO' changed",
        ])
    }
}
