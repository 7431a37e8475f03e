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
                  "inferred" : false,
                  "to" : "photo"
                },
                {
                  "from" : "photo",
                  "inferred" : false,
                  "to" : "thumb[v1.2]"
                }
              ],
              "nodes" : [
                {
                  "action" : "run",
                  "conditions" : [

                  ],
                  "dynamic" : false,
                  "exclusive" : [

                  ],
                  "id" : "fetch-list",
                  "item" : null,
                  "needs" : [

                  ],
                  "parallel" : null,
                  "priority" : "high",
                  "qos" : "utility",
                  "queue" : "network",
                  "service" : null
                },
                {
                  "action" : "run",
                  "conditions" : [

                  ],
                  "dynamic" : true,
                  "exclusive" : [

                  ],
                  "id" : "photo",
                  "item" : null,
                  "needs" : [
                    "fetch-list"
                  ],
                  "parallel" : null,
                  "priority" : "normal",
                  "qos" : null,
                  "queue" : null,
                  "service" : null
                },
                {
                  "action" : "run",
                  "conditions" : [

                  ],
                  "dynamic" : false,
                  "exclusive" : [

                  ],
                  "id" : "thumb[v1.2]",
                  "item" : "v1.2",
                  "needs" : [
                    "photo"
                  ],
                  "parallel" : null,
                  "priority" : "normal",
                  "qos" : "background",
                  "queue" : null,
                  "service" : null
                }
              ]
            }

            """)
    }

    @Test func gatesAreFieldsOfTheirNodes() throws {
        let data = Data(try gateSample().jsonText.utf8)
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let nodes = try #require(document["nodes"] as? [[String: Any]])
        let byID = Dictionary(uniqueKeysWithValues: nodes.compactMap { node in (node["id"] as? String).map { ($0, node) } })

        let server = try #require(byID["server"]?["service"] as? [String: Any])
        #expect(server["ready"] as? String == "127.0.0.1:8765 is reachable")
        #expect(server["timeout"] as? Double == 10)
        #expect(byID["checks"]?["parallel"] as? Int == 2)
        #expect(byID["checks"]?["exclusive"] as? [String] == ["db", "disk"])
        #expect(byID["deploy"]?["conditions"] as? [String] == ["$TOKEN is set", "file build/app exists"])
        #expect(byID["photo"]?["dynamic"] as? Bool == true)
        #expect(byID["deploy"]?["service"] is NSNull && byID["deploy"]?["parallel"] is NSNull)
    }

    @Test func everyNodeCarriesEveryKeyForToolsReadingIt() throws {
        let data = Data(try exportSample().jsonText.utf8)
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let nodes = try #require(document["nodes"] as? [[String: Any]])

        #expect(nodes.count == 5)
        for node in nodes {
            #expect(Set(node.keys) == [
                "id", "action", "queue", "priority", "qos", "needs", "dynamic", "item", "parallel", "conditions", "exclusive", "service",
            ])
        }
        #expect((document["edges"] as? [Any])?.count == 6)
    }
}
