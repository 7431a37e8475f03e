import JobGraphBasics

/// One entry of a task's `params:`, a value given on the command line after the task's name
/// (`jobgraph run deploy ENV=prod`; docs/pipeline.md, "Task parameters").
public struct TaskParameter: Hashable, Sendable {
    /// `type:`, what a value must look like.
    public enum Kind: String, CaseIterable, Sendable {
        case string, int, bool, path
    }

    public var name: String
    public var kind: Kind
    /// `enum:`, the only values allowed; `nil` when any value of the type is.
    public var allowed: [String]?
    /// `default:`, as written (a `path` is made absolute against the pipeline's folder when bound).
    public var defaultValue: String?
    public var isRequired: Bool
    public var help: String?
    /// Where the name is written under `params`.
    public var location: SourceLocation

    public init(
        name: String, kind: Kind = .string, allowed: [String]? = nil, defaultValue: String? = nil, isRequired: Bool = false,
        help: String? = nil, location: SourceLocation
    ) {
        self.name = name
        self.kind = kind
        self.allowed = allowed
        self.defaultValue = defaultValue
        self.isRequired = isRequired
        self.help = help
        self.location = location
    }

    /// Why `value` cannot be this parameter's, as the end of a message about it; `nil` when it can.
    public func problem(with value: String) -> String? {
        switch kind {
        case .int where Int(value) == nil:
            return "expected an integer, found '\(NodeDecoder.shortened(value))'"
        case .bool where value != "true" && value != "false":
            return "expected true or false, found '\(NodeDecoder.shortened(value))'"
        case .path where value.isEmpty:
            return "expected a path, found an empty value"
        default:
            break
        }
        if let allowed, !allowed.contains(value) {
            let hint = Suggestion.closest(to: value, in: allowed).map { "; did you mean '\($0)'?" } ?? ""
            return "'\(NodeDecoder.shortened(value))' is not one of \(Suggestion.list(allowed))\(hint)"
        }
        return nil
    }

    /// The value `given` stands for: a relative `path` joined to `directory`, anything else as given.
    public func value(of given: String, relativeTo directory: String) -> String {
        kind == .path ? String.absolute(given, in: directory) : given
    }
}
