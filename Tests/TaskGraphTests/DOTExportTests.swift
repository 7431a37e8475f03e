import Testing
@testable import TaskGraph

@Suite struct DOTExportTests {
    @Test func aSmallGraphRendersVerbatim() throws {
        #expect(try exportSample().dotText == #"""
            digraph "photos" {
              rankdir=LR;
              node [shape=box];
              "fetch-list" [label="fetch-list\nqueue: network"];
              "photo" [label="photo[*]\nqueue: network", style=dashed];
              "thumb[small]" [label="thumb[small]"];
              "thumb[v1.2]" [label="thumb[v1.2]"];
              "album" [label="album"];
              "fetch-list" -> "photo";
              "fetch-list" -> "thumb[small]";
              "fetch-list" -> "thumb[v1.2]";
              "photo" -> "album";
              "thumb[small]" -> "album";
              "thumb[v1.2]" -> "album";
            }

            """#)
    }

    @Test func quotesBackslashesAndLineBreaksCannotEndAQuotedID() {
        #expect(TaskGraph.dotQuoted(#"say "hi""#) == #""say \"hi\"""#)
        #expect(TaskGraph.dotQuoted(#"ends\"#) == #""ends\\""#)
        #expect(TaskGraph.dotQuoted("two\nlines") == #""two\nlines""#)
    }

    @Test func anUnnamedPipelineGetsAGenericGraphName() throws {
        var sketch = PipelineSketch()
        sketch.task("only")
        let graph = try #require(sketch.graph().graph)

        #expect(graph.dotText.hasPrefix("digraph \"pipeline\" {\n"))
    }
}
