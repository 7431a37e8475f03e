import JobGraphBasics
import YAMLNodes

/// Decodes each task while the file is still being read, so a million-task file never exists as a
/// YAML tree: each entry of `tasks` is decoded and dropped (see `YAMLEntryStream`).
///
/// Tasks are decoded against the `vars` and `defaults` written before `tasks`. When the whole file
/// shows that was not enough (one of them comes after `tasks`, a merge key adds tasks, an id is
/// repeated), `isSound(root:)` says so and the loader reads the file again as a whole, so what
/// the user sees never depends on streaming.
final class TaskStream {
    // Unchecked exclusivity: one loader call on one thread uses the stream, and the runtime check on
    // each access (twice per task) is pure overhead there.
    @exclusivity(unchecked) var decoder: NodeDecoder
    private let overrides: [String: String]
    private let commands: VariableCommandRunner?
    private(set) var variables: [Variable] = []
    private(set) var defaults: [TaskSpec.Field] = []
    @exclusivity(unchecked) private(set) var taskList = TaskListDecoder(defaults: [])
    /// Entries handed over, including ones that were not tasks.
    @exclusivity(unchecked) private(set) var entryCount = 0
    private var keysBefore: Set<String> = []

    /// A guess at the number of tasks, so the id table is sized once instead of rehashed as it grows.
    private let expectedTaskCount: Int

    /// - Parameter fileSize: the file's length in bytes; a task takes at least about 48 of them in
    ///   any realistic file, and capacity reserved beyond what is used is never touched.
    init(decoder: NodeDecoder, overrides: [String: String], commands: VariableCommandRunner? = nil, fileSize: Int = 0) {
        self.decoder = decoder
        self.overrides = overrides
        self.commands = commands
        self.expectedTaskCount = fileSize / 48
    }

    /// The YAML stream that feeds this one.
    func yamlStream() -> YAMLEntryStream {
        YAMLEntryStream(key: "tasks", begin: { [self] in begin($0) }, entry: { [self] in add($0) })
    }

    /// Decodes `vars` and `defaults` from the top-level entries written before `tasks`.
    private func begin(_ entriesBefore: [YAMLMappingEntry]) {
        keysBefore = Set(entriesBefore.compactMap(\.keyText))
        variables = Pipeline.decodeVariables(
            entriesBefore.first { $0.keyText == "vars" }?.value, overrides: overrides, commands: commands, decoder: &decoder)
        decoder.declareVariables(variables.map(\.name))
        defaults = Pipeline.decodeDefaults(entriesBefore.first { $0.keyText == "defaults" }, decoder: &decoder)
        taskList = TaskListDecoder(defaults: defaults, expectedCount: expectedTaskCount)
    }

    private func add(_ entry: YAMLMappingEntry) {
        entryCount += 1
        taskList.add(entry, decoder: &decoder)
    }

    /// Whether decoding the rest of `root` on top of the streamed tasks gives what decoding it whole would.
    func isSound(root: YAMLNode) -> Bool {
        guard !taskList.sawDuplicate, let entries = root.mapping else { return false }
        for entry in entries {
            switch entry.keyText {
            case "vars", "defaults":
                if !keysBefore.contains(entry.keyText ?? "") { return false }
            case "tasks":
                // Entries left in the tree came from merge keys, which the stream does not see.
                if entry.value.mapping?.isEmpty != true { return false }
            default:
                break
            }
        }
        return true
    }
}
