import JobGraphBasics
import PipelineModel
import Testing
import TaskGraph

/// A small graph touching every export feature: a queue, a static and a dynamic fan-out, priorities, QoS.
func exportSample() throws -> TaskGraph {
    var sketch = PipelineSketch(name: "photos", queues: [("network", .utility)])
    sketch.task("fetch-list", queue: "network", priority: .high)
    sketch.task("photo", needs: ["fetch-list"], itemsFrom: "build/photos.json", queue: "network")
    sketch.task("thumb", needs: ["fetch-list"], items: ["small", "v1.2"], qos: .background)
    sketch.task("album", needs: ["photo", "thumb"], priority: .veryLow)
    return try #require(sketch.graph().graph)
}

/// A graph whose tasks have every gate the exports show: a parallel group, conditions, exclusivity
/// categories, a service and a dynamic fan-out.
func gateSample() throws -> TaskGraph {
    var diagnostics = Diagnostics()
    let graph = PipelineCheck.graph(yaml: """
        version: 1
        tasks:
          server:
            run: python3 -m http.server 8765
            service: {ready: {reachable: "127.0.0.1:8765"}, timeout: 10s}
          checks:
            parallel: [make lint, make unit]
            exclusive: [db, disk]
          deploy:
            needs: [server, checks]
            conditions: [{env: TOKEN}, {file_exists: build/app}]
            run: ./deploy
          photo:
            needs: [deploy]
            foreach: {from: build/photos.json}
            run: echo {{ item }}
        """, diagnostics: &diagnostics)
    #expect(diagnostics.all.isEmpty, "\(diagnostics.all)")
    return try #require(graph)
}
