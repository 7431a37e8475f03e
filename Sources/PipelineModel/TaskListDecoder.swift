import JobGraphBasics
import YAMLNodes

/// Decodes the entries of `tasks` one at a time, in file order, so they can arrive from a stream and
/// each entry's nodes can be dropped once its task is decoded.
struct TaskListDecoder {
    private let defaults: [TaskSpec.Field]
    private let defaultKeys: UInt64
    private(set) var tasks: [TaskSpec] = []
    /// Every id under `tasks`, in file order, including tasks that failed to decode.
    private(set) var declaredIDs: [String] = []
    /// Each declared id's position in `declaredIDs`: the one table of task ids while loading.
    private(set) var indexByID: [String: Int] = [:]
    /// Whether an id came twice: the YAML layer reports that when it sees the whole mapping, so a
    /// streamed file with a duplicate is read again as a whole.
    private(set) var sawDuplicate = false

    init(defaults: [TaskSpec.Field], expectedCount: Int = 0) {
        self.defaults = defaults
        self.defaultKeys = defaults.reduce(UInt64(0)) { $0 | $1.bit }
        tasks.reserveCapacity(expectedCount)
        declaredIDs.reserveCapacity(expectedCount)
        indexByID.reserveCapacity(expectedCount)
    }

    mutating func add(_ entry: YAMLMappingEntry, decoder: inout NodeDecoder) {
        guard let id = entry.keyText, entry.key.scalar != nil else {
            decoder.error("expected a task id, found \(NodeDecoder.found(entry.key))", at: entry.key)
            return
        }
        guard indexByID.updateValue(declaredIDs.count, forKey: id) == nil else {
            sawDuplicate = true
            return
        }
        declaredIDs.append(id)
        // `lint:fix`, as go-task names tasks, is an id of the file's own; one inside an include's name
        // (`web:build`) is refused once the includes are known (`PipelineLoader.resolveIncludes`).
        if TaskID.syntax(of: id) == .invalid {
            decoder.error(
                "invalid task id '\(NodeDecoder.shortened(id))'; use letters, digits, '-', '_' and '.', with ':' between parts",
                at: entry.key)
        }
        var fields: [TaskSpec.Field] = []
        switch entry.value.content {
        case .mapping(let taskEntries):
            fields = decoder.knownEntries(taskEntries, allowed: TaskSpec.keys, in: "task '\(id)'") {
                TaskSpec.Field(known: $0, isDefault: false)
            }
        case .scalar(let scalar) where scalar.isNull:
            // An empty task still gets `defaults`; with no action there, it is reported as having none.
            break
        case .scalar(let scalar):
            decoder.error(
                "expected a mapping of task keys for task '\(id)', found \(NodeDecoder.found(entry.value)); "
                    + "for a shell command write '\(id): {run: \(NodeDecoder.shortened(scalar.text))}'",
                at: entry.value)
            return
        case .sequence:
            decoder.error("expected a mapping of task keys for task '\(id)', found a list", at: entry.value)
            return
        }
        if !defaults.isEmpty {
            var ownKeys = fields.reduce(UInt64(0)) { $0 | $1.bit }
            // The action keys count as one: a default `run` never joins a task's own `download`.
            if ownKeys & TaskSpec.Field.actionBits != 0 { ownKeys |= TaskSpec.Field.actionBits }
            if defaultKeys & ~ownKeys != 0 {
                for field in defaults where field.bit & ownKeys == 0 { fields.append(field) }
            }
        }
        tasks.append(TaskSpec.decode(id: id, idNode: entry.key, fields: fields, decoder: &decoder))
    }
}
