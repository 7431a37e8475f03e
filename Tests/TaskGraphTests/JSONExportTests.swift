import Foundation
import Testing
import TaskGraph

@Suite struct JSONExportTests {
    @Test func aSmallGraphRendersVerbatim() throws {
        var sketch = PipelineSketch(queues: [("network", .utility)])
        sketch.task("fetch-list", queue: "network", priority: .high)
        sketch.task("photo", needs: ["fetch-list"], itemsFrom: "build/photos.json")
        sketch.task("thumb", needs: ["photo"], items: ["v1.2"], qos: .background)
        let graph = try #require(sketch.graph().graph)

        #expect(try graph.jsonText == """
            {
              "edges" : [
                {
                  "from" : "fetch-list",
                  "to" : "photo"
                },
                {
                  "from" : "photo",
                  "to" : "thumb[v1.2]"
                }
              ],
              "nodes" : [
                {
                  "action" : "run",
                  "dynamic" : false,
                  "id" : "fetch-list",
                  "item" : null,
                  "needs" : [

                  ],
                  "priority" : "high",
                  "qos" : "utility",
                  "queue" : "network"
                },
                {
                  "action" : "run",
                  "dynamic" : true,
                  "id" : "photo",
                  "item" : null,
                  "needs" : [
                    "fetch-list"
                  ],
                  "priority" : "normal",
                  "qos" : null,
                  "queue" : null
                },
                {
                  "action" : "run",
                  "dynamic" : false,
                  "id" : "thumb[v1.2]",
                  "item" : "v1.2",
                  "needs" : [
                    "photo"
                  ],
                  "priority" : "normal",
                  "qos" : "background",
                  "queue" : null
                }
              ]
            }

            """)
    }

    @Test func everyNodeCarriesEveryKeyForToolsReadingIt() throws {
        let data = Data(try exportSample().jsonText.utf8)
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let nodes = try #require(document["nodes"] as? [[String: Any]])

        #expect(nodes.count == 5)
        for node in nodes {
            #expect(Set(node.keys) == ["id", "action", "queue", "priority", "qos", "needs", "dynamic", "item"])
        }
        #expect((document["edges"] as? [Any])?.count == 6)
    }
}
