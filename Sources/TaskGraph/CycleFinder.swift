import JobGraphBasics
import PipelineModel

/// Finds the dependency cycles of a graph Kahn's algorithm could not finish, and explains each one.
///
/// A depth-first search along `needs` edges, iterative so a 100,000-task chain cannot overflow the
/// stack. Every edge that leads back to a node still on the search path closes a cycle: the path from
/// that node round to it. Each cycle is reported once, as an error at the `needs` entry that closes it
/// followed by a note at each hop's entry. Cycles made of the same `needs` entries (the items of one
/// fan-out going round the same loop) are one mistake in the file, so they are reported once.
struct CycleFinder {
    /// Beyond this, further cycles add noise, not help: the user has plenty to fix.
    static let reportLimit = 100

    private enum Visit: UInt8 {
        case unvisited, onPath, finished
    }

    private struct Frame {
        var node: Int
        /// The edge being followed from `node` is `nextEdge - 1`.
        var nextEdge: Int
    }

    let nodes: [TaskNode]
    let dependencies: AdjacencyLists
    let edgeNeeds: [Int32]
    let inferredNeeds: [InferredNeed]
    private var reportedEntrySets: Set<Set<SourceLocation>> = []

    init(nodes: [TaskNode], dependencies: AdjacencyLists, edgeNeeds: [Int32], inferredNeeds: [InferredNeed] = []) {
        self.nodes = nodes
        self.dependencies = dependencies
        self.edgeNeeds = edgeNeeds
        self.inferredNeeds = inferredNeeds
    }

    private func location(ofNode node: Int, edge: Int) -> SourceLocation {
        TaskGraph.dependencyLocation(
            nodes: nodes, dependencies: dependencies, edgeNeeds: edgeNeeds, inferredNeeds: inferredNeeds, node: node, edge: edge)
    }

    /// Reports every cycle among the nodes not in `sorted` (the part of a topological order Kahn's
    /// algorithm managed): nodes it placed cannot lie on a cycle, so the search skips them.
    mutating func reportCycles(excluding sorted: [Int], diagnostics: inout Diagnostics) {
        var visit = [Visit](repeating: .unvisited, count: nodes.count)
        for node in sorted { visit[node] = .finished }
        var pathPosition = [Int](repeating: -1, count: nodes.count)
        var path: [Frame] = []
        for root in nodes.indices where visit[root] == .unvisited {
            visit[root] = .onPath
            pathPosition[root] = 0
            path.append(Frame(node: root, nextEdge: 0))
            while let top = path.last {
                guard top.nextEdge < dependencies[top.node].count else {
                    visit[top.node] = .finished
                    pathPosition[top.node] = -1
                    path.removeLast()
                    continue
                }
                path[path.count - 1].nextEdge += 1
                let next = dependencies[top.node][top.nextEdge]
                switch visit[next] {
                case .unvisited:
                    visit[next] = .onPath
                    pathPosition[next] = path.count
                    path.append(Frame(node: next, nextEdge: 0))
                case .onPath:
                    guard report(path[pathPosition[next]...], diagnostics: &diagnostics) else { return }
                case .finished:
                    break
                }
            }
        }
    }

    /// Reports the cycle that runs along `hops` and back to its first node; `false` once the limit is reached.
    private mutating func report(_ hops: ArraySlice<Frame>, diagnostics: inout Diagnostics) -> Bool {
        let entries = hops.map { location(ofNode: $0.node, edge: $0.nextEdge - 1) }
        guard reportedEntrySets.insert(Set(entries)).inserted else { return true }
        guard let closing = entries.last, let first = hops.first else { return true }
        guard reportedEntrySets.count <= Self.reportLimit else {
            diagnostics.error(
                "dependency cycle not shown: only the first \(Self.reportLimit) cycles are reported", at: closing)
            return false
        }
        let chain = (hops.map { nodes[$0.node].id.rawValue } + [nodes[first.node].id.rawValue])
            .joined(separator: " -> ")
        diagnostics.error("dependency cycle: \(chain)", at: closing)
        for (hop, entry) in zip(hops, entries) {
            let needed = dependencies[hop.node][hop.nextEdge - 1]
            let code = edgeNeeds[dependencies.firstEdge(of: hop.node) + hop.nextEdge - 1]
            if let inferred = TaskGraph.inferredNeed(code: code, in: inferredNeeds) {
                diagnostics.note("'\(nodes[hop.node].id)' needs '\(nodes[needed].id)': it reads '\(inferred.path)' here", at: entry)
                diagnostics.note("which '\(nodes[needed].id)' writes here", at: inferred.output)
            } else {
                diagnostics.note("'\(nodes[hop.node].id)' needs '\(nodes[needed].id)' here", at: entry)
            }
        }
        return true
    }
}
