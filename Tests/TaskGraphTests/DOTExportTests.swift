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

    @Test func gatesShowInTheLabelsAndAServiceIsRounded() throws {
        let lines = try gateSample().dotText.split(separator: "\n").map(String.init)
        #expect(lines.contains(#"  "server" [label="server\nservice, ready when 127.0.0.1:8765 is reachable within 10s", style=rounded];"#))
        #expect(lines.contains(#"  "checks" [label="checks\nparallel: 2 commands\nexclusive: db, disk"];"#))
        #expect(lines.contains(#"  "deploy" [label="deploy\nif $TOKEN is set and file build/app exists"];"#))
        #expect(lines.contains(#"  "photo" [label="photo[*]", style=dashed];"#))
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
