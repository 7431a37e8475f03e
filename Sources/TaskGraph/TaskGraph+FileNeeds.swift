import JobGraphBasics
import PipelineModel

/// A path one task declares, rendered for its node and normalised: relative to the pipeline's folder
/// when it is inside it, else absolute; with where it is written.
public struct DeclaredPath: Sendable {
    public var path: String
    public var location: SourceLocation

    public init(path: String, location: SourceLocation) {
        self.path = path
        self.location = location
    }
}

/// The `inputs` and `outputs` of one node, as `TaskGraph.addingFileNeeds` compares them.
public struct NodePaths: Sendable {
    public var inputs: [DeclaredPath]
    public var outputs: [DeclaredPath]

    public init(inputs: [DeclaredPath], outputs: [DeclaredPath]) {
        self.inputs = inputs
        self.outputs = outputs
    }
}

/// Which races over files `TaskGraph.addingFileNeeds` warns about.
public struct FileRaceWarnings: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// An input glob and an output glob that may name the same files: only a guess (`validate`).
    public static let overlappingGlobs = FileRaceWarnings(rawValue: 1)
    /// Two tasks that declare one output, neither needing the other: a fact, said at every load.
    public static let sharedOutputs = FileRaceWarnings(rawValue: 2)
}

/// An edge no `needs` entry wrote: the dependent reads `path`, which the needed task writes
/// (docs/pipeline.md, "Dependencies found from files").
public struct InferredNeed: Sendable, Equatable {
    /// The path as the dependent's input names it (a glob input: the output it matched).
    public var path: String
    /// Where the dependent's input is declared.
    public var input: SourceLocation
    /// Where the needed task's output is declared.
    public var output: SourceLocation
}

extension TaskGraph {
    /// The graph with an edge from each task that reads a path to each task that declares it writes it,
    /// where no `needs` entry already makes one.
    ///
    /// A literal input matches a literal output and an output glob; an input glob matches a literal
    /// output. Two globs are not compared (`warnings` may ask for a warning that names both when their
    /// fixed folders nest). A task never needs itself. A cycle through these edges is reported like any other,
    /// naming the input and the output behind each one.
    /// - Parameters:
    ///   - paths: per node, its rendered paths; `nil` for a node whose paths are not known yet (a dynamic
    ///     fan-out's item paths), which then takes part with none.
    ///   - warnings: the races over files to warn about.
    ///   - diagnostics: receives the cycles, and the warnings.
    /// - Returns: the graph (itself when nothing was inferred), or `nil` on a cycle.
    public func addingFileNeeds(
        _ paths: [NodePaths?], warnings: FileRaceWarnings = [], diagnostics: inout Diagnostics
    ) -> TaskGraph? {
        let index = OutputIndex(paths)
        if warnings.contains(.overlappingGlobs) { index.warnAboutOverlappingGlobs(paths, diagnostics: &diagnostics) }
        guard let graph = adding(needsFrom: index, paths, diagnostics: &diagnostics) else { return nil }
        if warnings.contains(.sharedOutputs) { index.warnAboutSharedOutputs(in: graph, diagnostics: &diagnostics) }
        return graph
    }

    /// The graph with the edges `index` finds for `paths`, or `nil` on a cycle, which `diagnostics` receives.
    private func adding(needsFrom index: OutputIndex, _ paths: [NodePaths?], diagnostics: inout Diagnostics) -> TaskGraph? {
        // First only what the files add: in a file whose needs are all written out (the usual case), nothing,
        // and the graph is kept as it is.
        var added: [(node: Int, producer: Int, need: InferredNeed)] = []
        var marked = [Int32](repeating: -1, count: nodes.count)
        for node in nodes.indices {
            guard let inputs = paths[node]?.inputs, !inputs.isEmpty else { continue }
            marked[node] = Int32(node)
            for need in dependencies[node] { marked[need] = Int32(node) }
            for input in inputs {
                for (producer, output) in index.producers(of: input.path) where marked[producer] != Int32(node) {
                    marked[producer] = Int32(node)
                    let path = GlobPattern.hasWildcards(input.path) ? output.path : input.path
                    added.append((node, producer, InferredNeed(path: path, input: input.location, output: output.location)))
                }
            }
        }
        guard !added.isEmpty else { return self }
        var inferred: [InferredNeed] = []
        var builder = AdjacencyBuilder(nodeCapacity: nodes.count, edgeCapacity: dependencies.count + added.count)
        var codes: [Int32] = []
        var next = 0
        for node in nodes.indices {
            let first = dependencies.firstEdge(of: node)
            for (edge, need) in dependencies[node].enumerated() {
                builder.append(need)
                codes.append(edgeNeeds[first + edge])
            }
            while next < added.count, added[next].node == node {
                builder.append(added[next].producer)
                codes.append(Self.inferredCode(inferredNeeds.count + inferred.count))
                inferred.append(added[next].need)
                next += 1
            }
            builder.endNode()
        }
        let withFiles = builder.build()
        let dependents = withFiles.reversed()
        let order = Self.kahnOrder(dependencies: withFiles, dependents: dependents)
        if order.count < nodes.count {
            var finder = CycleFinder(nodes: nodes, dependencies: withFiles, edgeNeeds: codes, inferredNeeds: inferred)
            finder.reportCycles(excluding: order, diagnostics: &diagnostics)
            return nil
        }
        var graph = TaskGraph(
            pipeline: pipeline, nodes: nodes, dependencies: withFiles, edgeNeeds: codes, dependents: dependents,
            topologicalOrder: order, names: names, inferredNeeds: inferredNeeds + inferred)
        graph.parameterValues = parameterValues
        return graph
    }

    /// Whether `node` needs `other`, directly or through what it needs.
    func needs(_ node: Int, transitively other: Int) -> Bool {
        var seen: Set<Int> = [node]
        var frontier = [node]
        while let next = frontier.popLast() {
            for need in dependencies[next] {
                if need == other { return true }
                if seen.insert(need).inserted { frontier.append(need) }
            }
        }
        return false
    }

    /// Why edge `dependencies[node][edge]` exists when no `needs` entry wrote it but the files do.
    public func inferredNeed(ofNode node: Int, edge: Int) -> InferredNeed? {
        Self.inferredNeed(code: edgeNeeds[dependencies.firstEdge(of: node) + edge], in: inferredNeeds)
    }

    /// Whether edge `dependencies[node][edge]` was found from files.
    public func isFoundFromFiles(node: Int, edge: Int) -> Bool { Self.isInferred(code: edgeNeeds[dependencies.firstEdge(of: node) + edge]) }

    /// The `edgeNeeds` code of the inferred edge numbered `number`: below `commandLineOrder`.
    static func inferredCode(_ number: Int) -> Int32 { Int32(-2 - number) }

    static func inferredNeed(code: Int32, in inferred: [InferredNeed]) -> InferredNeed? {
        isInferred(code: code) ? inferred[Int(-2 - code)] : nil
    }

    /// Whether an `edgeNeeds` code is one `inferredCode` made.
    static func isInferred(code: Int32) -> Bool {
        code <= -2
    }
}

/// Every declared output by path: the literal ones in a table, the globs by the folder before their
/// first wildcard, so that matching an input looks only at the globs above it.
public struct OutputIndex {
    public typealias Producer = (node: Int, output: DeclaredPath)
    private var literal: [String: [Producer]] = [:]
    private var globsByFolder: [String: [(pattern: GlobPattern, producer: Producer)]] = [:]
    /// The literal outputs sorted by path, for an input glob to search below its fixed folder; empty
    /// when no input is a glob.
    private var sortedLiteral: [String] = []

    /// The outputs of `paths` (per node, as `TaskGraph.addingFileNeeds` takes them).
    public init(_ paths: [NodePaths?]) {
        var inputGlobs = false
        for (node, nodePaths) in paths.enumerated() {
            guard let nodePaths else { continue }
            for output in nodePaths.outputs {
                if GlobPattern.hasWildcards(output.path) {
                    let pattern = GlobPattern(output.path)
                    globsByFolder[pattern.fixedFolder, default: []].append((pattern, (node, output)))
                } else {
                    literal[output.path, default: []].append((node, output))
                }
            }
            if !inputGlobs { inputGlobs = nodePaths.inputs.contains { GlobPattern.hasWildcards($0.path) } }
        }
        if inputGlobs { sortedLiteral = literal.keys.sorted { $0.precedesInByteOrder($1) } }
    }

    /// The tasks that declare they write what `input` names.
    public func producers(of input: String) -> [Producer] {
        if GlobPattern.hasWildcards(input) {
            let pattern = GlobPattern(input)
            var found: [Producer] = []
            for path in literalPaths(below: pattern.fixedFolder) where path.hasPrefix("/") == pattern.isAbsolute && pattern.matches(path: path) {
                found += literal[path] ?? []
            }
            // In file order, as the needs a task writes are.
            return found.sorted { $0.node < $1.node }
        }
        var found = literal[input] ?? []
        guard !globsByFolder.isEmpty else { return found }
        // Each folder above the input, up to `""`, holds the globs that may name it.
        let isAbsolute = input.hasPrefix("/")
        var folder = Substring(input)
        while !folder.isEmpty {
            folder = folder.lastIndex(of: "/").map { folder[..<$0] } ?? ""
            for glob in globsByFolder[String(folder)] ?? [] where glob.pattern.isAbsolute == isAbsolute && glob.pattern.matches(path: input) {
                found.append(glob.producer)
            }
        }
        return found
    }

    private func literalPaths(below folder: String) -> ArraySlice<String> {
        let prefix = folder.isEmpty ? "" : folder + "/"
        var low = 0, high = sortedLiteral.count
        while low < high {
            let middle = (low + high) / 2
            if sortedLiteral[middle].precedesInByteOrder(prefix) { low = middle + 1 } else { high = middle }
        }
        var end = low
        while end < sortedLiteral.count, sortedLiteral[end].hasPrefix(prefix) { end += 1 }
        return sortedLiteral[low..<end]
    }

    /// Two globs are not compared; where an input glob's fixed folder and an output glob's nest, they may
    /// name the same files, and the user should say which task needs which.
    func warnAboutOverlappingGlobs(_ paths: [NodePaths?], diagnostics: inout Diagnostics) {
        var warned: Set<[SourceLocation]> = []
        for (node, nodePaths) in paths.enumerated() {
            for input in nodePaths?.inputs ?? [] {
                guard GlobPattern.hasWildcards(input.path) else { continue }
                let pattern = GlobPattern(input.path)
                for (folder, globs) in globsByFolder where Self.nests(folder, pattern.fixedFolder) {
                    for glob in globs where glob.producer.node != node {
                        // The items of a fan-out share their declarations: one warning per pair of them.
                        guard warned.insert([input.location, glob.producer.output.location]).inserted else { continue }
                        diagnostics.warning(
                            "input glob '\(input.path)' may name files that the output glob '\(glob.producer.output.path)' declares; "
                                + "globs are not compared, so add a `needs` entry if this task reads them", at: input.location)
                        diagnostics.note("the output glob is declared here", at: glob.producer.output.location)
                    }
                }
            }
        }
    }

    /// Two tasks that declare one literal output, neither needing the other, may run at once and race to
    /// write it; the one that runs second may also find it up to date. ninja refuses such a file and make
    /// overrides one recipe; here the user is told and the run goes on. Once per pair of declarations: the
    /// items of a fan-out share theirs.
    func warnAboutSharedOutputs(in graph: TaskGraph, diagnostics: inout Diagnostics) {
        var examined: Set<[SourceLocation]> = []
        let shared = literal.filter { $0.value.count > 1 }.sorted { $0.key.precedesInByteOrder($1.key) }
        for (path, producers) in shared {
            // Each producer is compared with the first of each declaration before it, once per pair of
            // declarations: a fan-out of thousands writing one file is warned about once.
            var firsts: [Producer] = []
            for second in producers {
                for first in firsts where first.node != second.node {
                    guard !examined.contains([second.output.location, first.output.location]),
                          examined.insert([first.output.location, second.output.location]).inserted,
                          !graph.needs(first.node, transitively: second.node), !graph.needs(second.node, transitively: first.node)
                    else { continue }
                    diagnostics.warning(
                        "'\(graph.nodes[second.node].id.rawValue)' and '\(graph.nodes[first.node].id.rawValue)' both declare they write "
                            + "'\(path)', and neither needs the other, so they may run at once and race; let one task write it, "
                            + "or add a `needs` entry", at: second.output.location)
                    diagnostics.note("'\(graph.nodes[first.node].id.rawValue)' declares it here", at: first.output.location)
                }
                if !firsts.contains(where: { $0.output.location == second.output.location }) { firsts.append(second) }
            }
        }
    }

    private static func nests(_ a: String, _ b: String) -> Bool {
        a == b || a.hasPrefix(b + "/") || b.hasPrefix(a + "/")
    }
}
