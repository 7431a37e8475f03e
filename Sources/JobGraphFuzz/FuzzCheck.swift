import JobGraphBasics
import PipelineModel
import TaskGraph

/// Runs arbitrary bytes through everything `jobgraph validate` does and checks the answers hang together.
///
/// Used both by the libFuzzer entry point and by the reproducer, so a crash found while fuzzing replays
/// through exactly the same calls.
enum FuzzCheck {
    /// The name every diagnostic must carry, so a location pointing elsewhere is caught.
    static let fileName = "fuzz.yaml"

    /// What one input produced.
    struct Outcome {
        /// Every diagnostic the check emitted, sorted as `validate` prints them.
        var diagnostics: [Diagnostic]
        /// Nodes in the task graph, when one was built.
        var nodeCount: Int?
        /// Broken promises of the loader or the graph; empty when all is well.
        var violations: [String]
    }

    /// Loads `bytes` as a pipeline file, builds its graph and exercises the graph's queries.
    static func check(_ bytes: [UInt8]) -> Outcome {
        var diagnostics = Diagnostics()
        var violations: [String] = []
        var nodeCount: Int?

        // The same calls as PipelineCheck.graph, taken apart so each stage's promise can be checked.
        let pipeline = PipelineLoader.load(bytes, file: fileName, diagnostics: &diagnostics)
        if pipeline == nil, !diagnostics.hasErrors { violations.append("PipelineLoader returned nil without an error") }

        if let pipeline {
            if diagnostics.hasErrors { violations.append("PipelineLoader returned a pipeline despite errors") }
            if let graph = TaskGraph.build(pipeline, diagnostics: &diagnostics) {
                nodeCount = graph.nodes.count
                violations += graphViolations(graph)
            } else if !diagnostics.hasErrors {
                violations.append("TaskGraph.build returned nil without an error")
            }
        }

        let sorted = diagnostics.sorted
        if sorted.count != diagnostics.all.count { violations.append("Diagnostics.sorted lost or added diagnostics") }
        for diagnostic in sorted {
            guard let location = diagnostic.location else { continue }
            if location.file != fileName || location.line < 1 || location.column < 1 {
                violations.append("diagnostic at \(location.file):\(location.line):\(location.column) is not a 1-based place in \(fileName): \(diagnostic.message)")
            }
            if diagnostic.message.isEmpty { violations.append("empty diagnostic message at line \(location.line)") }
        }
        return Outcome(diagnostics: sorted, nodeCount: nodeCount, violations: violations)
    }

    /// Checks the graph's documented promises: a real topological order, consistent edges, sane path lengths,
    /// and selection of any task keeping exactly what it needs.
    static func graphViolations(_ graph: TaskGraph) -> [String] {
        var violations: [String] = []
        let count = graph.nodes.count
        var position = [Int](repeating: -1, count: count)
        for (rank, node) in graph.topologicalOrder.enumerated() {
            guard node >= 0, node < count, position[node] == -1 else {
                violations.append("topologicalOrder repeats or leaves the node range at \(node)")
                return violations
            }
            position[node] = rank
        }
        if graph.topologicalOrder.count != count { violations.append("topologicalOrder misses nodes of an acyclic graph") }
        let locations = graph.dependencyLocations
        for node in 0..<count {
            if graph.nodes[node].index != node { violations.append("node \(node) says its index is \(graph.nodes[node].index)") }
            for dependency in graph.dependencies[node] where position[dependency] >= position[node] {
                violations.append("'\(graph.nodes[node].id)' comes before '\(graph.nodes[dependency].id)', which it needs")
            }
            for dependent in graph.dependents[node] where !graph.dependencies[dependent].contains(node) {
                violations.append("dependents and dependencies disagree at node \(node)")
            }
            if locations[node].count != graph.dependencies[node].count {
                violations.append("node \(node) has \(graph.dependencies[node].count) needs but \(locations[node].count) locations")
            }
        }
        let lengths = graph.criticalPathLengths()
        if lengths.count != count || lengths.contains(where: { !($0 >= 1) }) {
            violations.append("criticalPathLengths gave \(lengths.count) values for \(count) nodes, or one below 1")
        }
        // Selecting the last node in order is the costliest case: it keeps everything it needs.
        if let last = graph.topologicalOrder.last {
            var selectionDiagnostics = Diagnostics()
            let id = graph.nodes[last].id.rawValue
            if let subgraph = graph.selecting([id], diagnostics: &selectionDiagnostics) {
                if subgraph.index(of: graph.nodes[last].id) == nil { violations.append("selecting '\(id)' dropped it") }
                if subgraph.topologicalOrder.count != subgraph.nodes.count { violations.append("selected subgraph of '\(id)' lost its order") }
            } else {
                violations.append("selecting existing task '\(id)' failed: \(selectionDiagnostics.all.map(\.message))")
            }
        }
        return violations
    }
}
