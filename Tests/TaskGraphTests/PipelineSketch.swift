import JobGraphBasics
import Reporters
import PipelineModel
import TaskGraph

/// Builds a `Pipeline` in tests as if its tasks were written one after another in `pipeline.yaml`:
///
///     version: 1                  line 1
///     tasks:                      line 2
///       NAME:                     line 3 + 4k for task k (0-based), column 3
///         run: echo NAME          line 4 + 4k
///         needs: [A, B]           line 5 + 4k, first entry at column 13, each next one after ", "
///         foreach: [x, y]         line 6 + 4k, first item at column 15
///
/// so tests can state where a diagnostic points without a loader.
struct PipelineSketch {
    static let file = "pipeline.yaml"

    var name: String?
    var queues: [QueueSpec] = []
    private(set) var tasks: [TaskSpec] = []

    init(name: String? = nil, queues: [(name: String, qos: QualityOfService?)] = []) {
        self.name = name
        self.queues = queues.map { QueueSpec(name: QueueName($0.name), qos: $0.qos, location: Self.at(1, 1)) }
    }

    static func at(_ line: Int, _ column: Int) -> SourceLocation {
        SourceLocation(file: file, line: line, column: column)
    }

    /// Adds a task; `items` makes a static fan-out, `itemsFrom` a dynamic one.
    mutating func task(
        _ id: String, needs: [String] = [], items: [String]? = nil, itemsFrom: String? = nil, queue: String? = nil,
        priority: Priority = .normal, qos: QualityOfService? = nil
    ) {
        let line = 3 + 4 * tasks.count
        let foreach: Foreach? =
            if let items {
                .items(Self.flowSequence(items, line: line + 3, column: 15).map { Located($0.text, at: $0.location) })
            } else if let itemsFrom {
                .file(Template(literal: itemsFrom, location: Self.at(line + 3, 23)))
            } else {
                nil
            }
        tasks.append(TaskSpec(
            id: TaskID(id), location: Self.at(line, 3),
            action: .run([Template(literal: "echo \(id)", location: Self.at(line + 1, 10))]),
            needs: Self.flowSequence(needs, line: line + 2, column: 13).map { Located(TaskID($0.text), at: $0.location) },
            queue: queue.map { Located(QueueName($0), at: Self.at(line + 3, 12)) },
            priority: priority, qos: qos, foreach: foreach))
    }

    /// Where task `task` names `need` in its `needs`.
    func location(ofNeed need: String, in task: String) -> SourceLocation? {
        tasks.first { $0.id.rawValue == task }?.needs.first { $0.value.rawValue == need }?.location
    }

    var pipeline: Pipeline {
        Pipeline(file: Self.file, name: name, queues: queues, tasks: tasks)
    }

    /// Builds the graph, expecting success; failures show up as a `nil` graph and diagnostics.
    func graph() -> (graph: TaskGraph?, diagnostics: Diagnostics) {
        var diagnostics = Diagnostics()
        let graph = TaskGraph.build(pipeline, diagnostics: &diagnostics)
        return (graph, diagnostics)
    }

    private static func flowSequence(_ texts: [String], line: Int, column: Int) -> [(text: String, location: SourceLocation)] {
        var column = column
        return texts.map { text in
            defer { column += text.unicodeScalars.count + 2 }
            return (text, at(line, column))
        }
    }
}

/// Diagnostics as the command line prints them.
func rendered(_ diagnostics: Diagnostics) -> [String] {
    DiagnosticPrinter().render(diagnostics)
}

extension TaskGraph {
    /// The ids of `indices`, for readable expectations.
    func ids(_ indices: some Sequence<Int>) -> [String] { indices.map { nodes[$0].id.rawValue } }

    var allIDs: [String] { nodes.map(\.id.rawValue) }

    /// Each node's dependencies as ids.
    var needsByID: [String: [String]] {
        Dictionary(uniqueKeysWithValues: nodes.map { ($0.id.rawValue, ids(dependencies[$0.index])) })
    }
}
