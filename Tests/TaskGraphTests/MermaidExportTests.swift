import Testing
@testable import TaskGraph

@Suite struct MermaidExportTests {
    @Test func aSmallGraphRendersVerbatim() throws {
        #expect(try exportSample().mermaidText == """
            flowchart LR
              n0["fetch-list<br/>queue: network"]
              n1["photo[*]<br/>queue: network"]
              n2["thumb[small]"]
              n3["thumb[v1.2]"]
              n4["album"]
              n0 --> n1
              n0 --> n2
              n0 --> n3
              n1 --> n4
              n2 --> n4
              n3 --> n4
              classDef dynamic stroke-dasharray: 5 5
              class n1 dynamic

            """)
    }

    @Test func gatesShowInTheLabelsAndAServiceIsRounded() throws {
        #expect(try gateSample().mermaidText == """
            flowchart LR
              n0("server<br/>service, ready when 127.0.0.1:8765 is reachable within 10s")
              n1["checks<br/>parallel: 2 commands<br/>exclusive: db, disk"]
              n2["deploy<br/>if $TOKEN is set and file build/app exists"]
              n3["photo[*]"]
              n0 --> n2
              n1 --> n2
              n2 --> n3
              classDef dynamic stroke-dasharray: 5 5
              class n3 dynamic

            """)
    }

    @Test func itemsWithMarkupStayInsideTheirLabel() throws {
        var sketch = PipelineSketch()
        sketch.task("echo", items: [#"say "hi""#, "#1 <b> & more\nlines"])
        let graph = try #require(sketch.graph().graph)

        #expect(graph.mermaidText == """
            flowchart LR
              n0["echo[say #quot;hi#quot;]"]
              n1["echo[#35;1 #lt;b#gt; #amp; more lines]"]

            """)
    }
}
