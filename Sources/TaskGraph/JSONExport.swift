import Foundation
import PipelineModel

extension TaskGraph {
    /// The graph as pretty JSON with sorted keys, for `jobgraph graph --format json`; the same graph
    /// always gives the same bytes.
    ///
    /// `{"nodes": [{"id", "action", "queue", "priority", "qos", "needs", "dynamic", "item", "parallel",
    /// "conditions", "exclusive", "service"}], "edges": [{"from", "to", "inferred"}]}`; `parallel` counts a parallel
    /// group's commands, `conditions` reads each condition as `run --dry-run` does, `service` is
    /// `{"ready", "timeout"}` (seconds); an edge runs from a needed task to the task that needs it;
    /// absent values are `null`.
    /// - Throws: `EncodingError` if Foundation cannot encode (it has no reason to with these plain values).
    public var jsonText: String {
        get throws {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let data = try encoder.encode(GraphDocument(self))
            return String(decoding: data, as: UTF8.self) + "\n"
        }
    }
}

/// The JSON shape of a task graph; the coding keys are the published field names.
struct GraphDocument: Encodable {
    struct Node: Encodable {
        var id: String
        var action: String
        var queue: String?
        var priority: String
        var qos: String?
        var needs: [String]
        var isDynamicFanOut: Bool
        var item: String?
        var parallel: Int?
        var conditions: [String]
        var exclusive: [String]
        var service: Service?

        enum CodingKeys: String, CodingKey {
            case id, action, queue, priority, qos, needs
            case isDynamicFanOut = "dynamic"
            case item, parallel, conditions, exclusive, service
        }

        /// `service:`: what makes it ready, and the seconds it may take.
        struct Service: Encodable {
            var ready: String?
            var timeout: Double?

            enum CodingKeys: String, CodingKey {
                case ready, timeout
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(ready, forKey: .ready)
                try container.encode(timeout, forKey: .timeout)
            }
        }

        // Written out so absent values appear as `null`: tools reading the file see every key on every node.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(action, forKey: .action)
            try container.encode(queue, forKey: .queue)
            try container.encode(priority, forKey: .priority)
            try container.encode(qos, forKey: .qos)
            try container.encode(needs, forKey: .needs)
            try container.encode(isDynamicFanOut, forKey: .isDynamicFanOut)
            try container.encode(item, forKey: .item)
            try container.encode(parallel, forKey: .parallel)
            try container.encode(conditions, forKey: .conditions)
            try container.encode(exclusive, forKey: .exclusive)
            try container.encode(service, forKey: .service)
        }
    }

    struct Edge: Encodable {
        /// The needed task.
        var from: String
        /// The task that needs it.
        var to: String
        /// Found from files: the task reads what the needed one writes, and no `needs` entry says so.
        var inferred: Bool

        enum CodingKeys: String, CodingKey {
            case from, to, inferred
        }
    }

    var nodes: [Node]
    var edges: [Edge]

    enum CodingKeys: String, CodingKey {
        case nodes, edges
    }

    init(_ graph: TaskGraph) {
        nodes = graph.nodes.map { node in
            Node(
                id: node.id.rawValue, action: node.spec.action.keyword,
                queue: node.spec.queue?.value.rawValue, priority: node.spec.priority.rawValue,
                qos: graph.qualityOfService(ofNode: node.index)?.rawValue,
                needs: graph.dependencies[node.index].map { graph.nodes[$0].id.rawValue },
                isDynamicFanOut: node.isDynamicFanOut, item: node.item?.value,
                parallel: { if case .parallel(let commands) = node.spec.action { commands.count } else { nil } }(),
                conditions: node.spec.conditions.map(\.summary), exclusive: node.spec.exclusive,
                service: node.spec.service.map { Node.Service(ready: $0.ready?.summary, timeout: $0.timeout) })
        }
        edges = graph.nodes.flatMap { node in
            graph.dependencies[node.index].enumerated().map { edge, need in
                Edge(from: graph.nodes[need].id.rawValue, to: node.id.rawValue, inferred: graph.isFoundFromFiles(node: node.index, edge: edge))
            }
        }
    }
}
