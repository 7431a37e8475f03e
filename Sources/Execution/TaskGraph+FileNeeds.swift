import JobGraphBasics
import PipelineModel
import TaskGraph

extension TaskGraph {
    /// The graph as its files shape it, before the run: the needs they imply, and the items of each
    /// `from:` list that can be read now.
    ///
    /// - A task that reads a path another declares it writes (its `outputs`, a download's `to`, a filter's
    ///   `output`) needs it (docs/pipeline.md, "Dependencies found from files"). Paths are compared after
    ///   templating, per item, joined to each task's folder. A path that cannot be rendered yet (a param
    ///   before it is given, a dynamic fan-out's `{{ item }}`) takes no part. A fan-out's `from:` list counts
    ///   among what it reads.
    /// - A fan-out that then needs nothing (but the items its per-item needs name) would read its list as
    ///   the run starts: it is read now, so the dry run, `graph` and `explain` show its items and per-item
    ///   needs reach them (docs/pipeline.md, "foreach"). A list that is missing or unreadable is left to the
    ///   run, which reports it.
    /// - Parameters:
    ///   - pipelineDirectory: the pipeline's folder, absolute.
    ///   - warnings: the races over files to warn about (`FileRaceWarnings`).
    ///   - previewingLists: for a graph that is shown, not run (`--dry-run`, `graph`, `explain`): the list
    ///     of a fan-out that has needs is read now too, when no task writes it (it is an input of the
    ///     pipeline); its items wait for those needs. A run reads such a list once its needs are done.
    /// - Returns: the graph, or `nil` on an error (reported in `diagnostics`).
    public func resolvingFiles(
        pipelineDirectory: String, warnings: FileRaceWarnings = [], previewingLists: Bool = false, diagnostics: inout Diagnostics
    ) -> TaskGraph? {
        let configuration = RunConfiguration(
            jobs: 1, pipelineDirectory: pipelineDirectory, stateDirectory: pipelineDirectory, environment: [:], processorCount: 1)
        let paths = declaredPaths(configuration)
        var first = Diagnostics()
        var graph = paths.map { addingFileNeeds($0, warnings: warnings, diagnostics: &first) } ?? self
        let outputs = previewingLists ? OutputIndex(paths ?? []) : nil
        if let withNeeds = graph, let listed = withNeeds.listsReadable(configuration, previewingWith: outputs), !listed.isEmpty {
            // The graph with the lists' items is the one warned about; the first one's warnings would repeat.
            graph = TaskGraph.build(pipeline, listedItems: listed, diagnostics: &diagnostics).flatMap { rebuilt in
                rebuilt.declaredPaths(configuration).map { rebuilt.addingFileNeeds($0, warnings: warnings, diagnostics: &diagnostics) } ?? rebuilt
            }
        } else {
            diagnostics.append(contentsOf: first)
        }
        return diagnostics.hasErrors ? nil : graph
    }

    /// Per node, the paths it reads and writes, rendered; `nil` when no task declares what it writes.
    private func declaredPaths(_ configuration: RunConfiguration) -> [NodePaths?]? {
        guard pipeline.tasks.contains(where: { !$0.outputs.isEmpty || !$0.action.isShell }) else { return nil }
        // The pipeline's `env` failing to render fails the run later, with its own message.
        guard let resolver = try? WorkResolver(graph: self, configuration: configuration) else { return nil }
        return nodes.map { node -> NodePaths? in
            let spec = node.spec
            // Most tasks write their paths out in full and run in the pipeline's folder: joined as they are,
            // without a task's context (perf record, no-op rerun of 10,000 layered tasks: rendering through
            // the context was 12% of the run).
            if spec.cwd == nil, !node.isDynamicFanOut, spec.action.isShell,
               let inputs = Self.literalPaths(spec.inputs, in: configuration.pipelineDirectory),
               let outputs = Self.literalPaths(spec.outputs, in: configuration.pipelineDirectory) {
                return NodePaths(inputs: inputs, outputs: outputs)
            }
            let task = RunTask(node: node, graph: self, queue: 0)
            guard let directory = try? resolver.workingDirectory(for: task) else { return nil }
            let context = resolver.context(for: task)
            // Rendered as plain text: a value that leaves the pipeline's folder fails its task when it runs, and
            // the check for that split every path (perf record, dry run of 60,000 templated tasks: 24%).
            func rendered(_ templates: [Template]) -> [DeclaredPath] {
                templates.compactMap { template in
                    guard let text = try? template.rendered(in: context), !text.hasPrefix("!") else { return nil }
                    return DeclaredPath(path: Self.declared(text, in: directory, pipelineDirectory: configuration.pipelineDirectory),
                                        location: template.location)
                }
            }
            var inputs = spec.inputs
            var outputs = spec.outputs
            switch spec.action {
            case .download(let download): outputs.append(download.destination)
            case .filter(let filter):
                inputs.append(filter.input)
                outputs.append(filter.output)
            case .run, .parallel: break
            }
            var declared = NodePaths(inputs: rendered(inputs), outputs: rendered(outputs))
            if node.isDynamicFanOut, case .file(let source)? = spec.foreach, let list = try? resolver.fanOutList(for: task) {
                declared.inputs.append(DeclaredPath(
                    path: Self.declared(list.path, in: directory, pipelineDirectory: configuration.pipelineDirectory), location: source.location))
            }
            return declared
        }
    }

    /// Templates without placeholders as paths of a task in the pipeline's folder (an `!` exclusion names
    /// nothing read); `nil` when one has a placeholder.
    private static func literalPaths(_ templates: [Template], in directory: String) -> [DeclaredPath]? {
        var paths: [DeclaredPath] = []
        paths.reserveCapacity(templates.count)
        for template in templates {
            guard let text = template.literalText else { return nil }
            if !text.hasPrefix("!") {
                paths.append(DeclaredPath(path: declared(text, in: directory, pipelineDirectory: directory), location: template.location))
            }
        }
        return paths
    }

    /// `text`, a path of a task in `directory`, as `DeclaredPath` holds it: normalised, relative to the
    /// pipeline's folder when inside it. A plain path of a task in the pipeline's folder is kept as written.
    private static func declared(_ text: String, in directory: String, pipelineDirectory: String) -> String {
        if directory == pipelineDirectory, !NormalPath.mayHoldDotDot(text), GlobPattern.isPlainRelative(text) { return text }
        let path = NormalPath(text, in: directory).description
        return path.hasPrefix(pipelineDirectory + "/") ? String(path.dropFirst(pipelineDirectory.utf8.count + 1)) : path
    }

    /// The items of each dynamic fan-out whose list can be read now, read from its list, by its task's
    /// position in the pipeline; `nil` when the pipeline's templates cannot be rendered. A list can be read
    /// now when its task would read it as the run starts (it needs nothing, and the lists its per-item
    /// needs wait for are read now too), or, previewing, when no task writes it.
    /// - Parameter outputs: previewing, what the tasks declare they write.
    private func listsReadable(_ configuration: RunConfiguration, previewingWith outputs: OutputIndex?) -> [Int: [ForeachItem]]? {
        guard nodes.contains(where: \.isDynamicFanOut), let resolver = try? WorkResolver(graph: self, configuration: configuration) else {
            return nil
        }
        var readable = Set<Int>()
        if let outputs {
            for node in nodes where node.isDynamicFanOut {
                let task = RunTask(node: node, graph: self, queue: 0)
                guard let list = try? resolver.fanOutList(for: task), let directory = try? resolver.workingDirectory(for: task) else { continue }
                let path = Self.declared(list.path, in: directory, pipelineDirectory: configuration.pipelineDirectory)
                if !outputs.producers(of: path).contains(where: { $0.node != node.index }) { readable.insert(node.index) }
            }
        } else {
            var waits: [Int: [Int]] = [:]
            for node in nodes where node.isDynamicFanOut {
                let needs = runNeeds(ofNode: node.index)
                if needs.needs.isEmpty { waits[node.index] = needs.lists }
            }
            // The lists waited for form no cycle (they are edges of the graph): each round adds one at least.
            var added = true
            while added {
                added = false
                for (node, lists) in waits where !readable.contains(node) && lists.allSatisfy(readable.contains) {
                    readable.insert(node)
                    added = true
                }
            }
        }
        var listed: [Int: [ForeachItem]] = [:]
        // A per-sample chain's fan-outs read one list each: it is read once.
        var read: [String: [ItemValue]] = [:]
        for node in readable.sorted() {
            let task = RunTask(node: nodes[node], graph: self, queue: 0)
            guard case .file(let source)? = task.spec.foreach,
                  let list = try? resolver.fanOutList(for: task),
                  let items = try? read[list.path] ?? FanOutItems.read(list.path, shownAs: list.shown),
                  let position = pipeline.tasks.firstIndex(where: { $0.id == task.id }) else { continue }
            read[list.path] = items
            listed[position] = items.enumerated().map { ForeachItem($1, index: $0, location: source.location) }
        }
        return listed
    }
}
