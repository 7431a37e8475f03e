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
