import JobGraphBasics

/// A string with `{{ name }}` placeholders, split once at load time into literal and variable pieces.
public struct Template: Hashable, Sendable, CustomStringConvertible {
    public enum Segment: Hashable, Sendable {
        case literal(String)
        /// `path` is the dotted name: `["server"]`, `["item"]`, `["item", "url"]`.
        case variable(path: [String], location: SourceLocation)
    }

    /// Most templates (a command, a path) hold no placeholder: they keep their text alone, which
    /// saves an array per template in a file of a million tasks.
    private enum Storage: Sendable {
        case literal(String)
        case segments([Segment])
    }

    private var storage: Storage
    /// Where the string starts in the file.
    public var location: SourceLocation

    /// The pieces in order; a literal template is one `.literal` piece (none when empty).
    public var segments: [Segment] {
        get {
            switch storage {
            case .literal(let text): text.isEmpty ? [] : [.literal(text)]
            case .segments(let segments): segments
            }
        }
        set { storage = .segments(newValue) }
    }

    public init(segments: [Segment], location: SourceLocation) {
        self.storage = .segments(segments)
        self.location = location
    }

    /// A template with no placeholders.
    public init(literal: String, location: SourceLocation) {
        self.storage = .literal(literal)
        self.location = location
    }

    /// The text of a template written with no placeholder (kept as is); `nil` otherwise.
    public var literalText: String? {
        if case .literal(let text) = storage { return text }
        return nil
    }

    public var isLiteral: Bool {
        switch storage {
        case .literal: true
        case .segments(let segments): segments.allSatisfy { if case .literal = $0 { true } else { false } }
        }
    }

    /// Names used, first component only (`item` for `item.url`).
    public var variableNames: [String] {
        guard case .segments(let segments) = storage else { return [] }
        return segments.compactMap { if case .variable(let path, _) = $0 { path[0] } else { nil } }
    }

    /// Whether it names the fan-out item: `{{ item }}`, a field of it, or its position `{{ index }}`.
    public var usesItem: Bool { variableNames.contains { $0 == "item" || $0 == "index" } }

    /// The text as written, placeholders included.
    public var description: String {
        switch storage {
        case .literal(let text):
            return text
        case .segments(let segments):
            return segments.map { segment in
                switch segment {
                case .literal(let text): text
                case .variable(let path, _): "{{ \(path.joined(separator: ".")) }}"
                }
            }.joined()
        }
    }

    // Equal when the pieces are, however they are stored.
    public static func == (lhs: Template, rhs: Template) -> Bool {
        lhs.location == rhs.location && lhs.segments == rhs.segments
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(segments)
        hasher.combine(location)
    }
}
