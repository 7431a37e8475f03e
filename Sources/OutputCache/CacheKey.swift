import JobGraphBasics
import PipelineModel

/// The cache key of a task (docs/cache.md, "The key"): SHA-256 over an unambiguous encoding of what went
/// into it. Two tasks with the same key make the same outputs, as far as jobgraph can know.
public struct CacheKeyParts: Sendable {
    /// Bumped whenever what is stored or how the key is made changes: old entries are then never read.
    public static let formatVersion = 1

    /// `TaskDefinition.fingerprint`: command or action parameters, the environment it sets, the resolved
    /// variables, its `inputs` and `outputs` patterns and its folder.
    public var definition: String
    /// Each input file by its path (relative to the pipeline's folder), with its content's SHA-256.
    public var inputs: [(path: String, sha256: String)]
    /// The keys of the tasks it needs, in `needs` order; `nil` for a need that has none.
    public var needKeys: [String?]
    /// The `cache_env` variables, by name, with their values from the caller's environment (`nil`: unset).
    public var environment: [(name: String, value: String?)]
    /// `linux/amd64`.
    public var platform: String = Platform.current

    public init(definition: String, inputs: [(path: String, sha256: String)], needKeys: [String?],
                environment: [(name: String, value: String?)]) {
        self.definition = definition
        self.inputs = inputs
        self.needKeys = needKeys
        self.environment = environment
    }

    /// 64 lower-case hex digits.
    public var key: String {
        var hasher = SHA256()
        // Every variable-length field is preceded by its length in bytes, so no two lists encode alike.
        func field(_ tag: String, _ text: String) {
            hasher.update("\(tag) \(text.utf8.count):".utf8)
            hasher.update(text.utf8)
            hasher.update([0x0A])
        }
        field("format", String(Self.formatVersion))
        field("platform", platform)
        field("definition", definition)
        for input in inputs {
            field("input", input.path)
            field("sha256", input.sha256)
        }
        for need in needKeys { field(need == nil ? "need-unkeyed" : "need", need ?? "") }
        for variable in environment.sorted(by: { $0.name.precedesInByteOrder($1.name) }) {
            field("env", variable.name)
            if let value = variable.value { field("value", value) } else { field("unset", "") }
        }
        return hasher.finalizeHex()
    }
}
