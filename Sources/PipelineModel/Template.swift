import JobGraphBasics

/// A string with `{{ name }}` placeholders, split once at load time into literal and variable pieces.
public struct Template: Hashable, Sendable, CustomStringConvertible {
    public enum Segment: Hashable, Sendable {
        case literal(String)
        /// `path` is the dotted name: `["server"]`, `["item"]`, `["item", "url"]`.
        case variable(path: [String], location: SourceLocation)
    }

    public var segments: [Segment]
    /// Where the string starts in the file.
    public var location: SourceLocation

    public init(segments: [Segment], location: SourceLocation) {
        self.segments = segments
        self.location = location
    }

    /// A template with no placeholders.
    public init(literal: String, location: SourceLocation) {
        self.init(segments: literal.isEmpty ? [] : [.literal(literal)], location: location)
    }

    public var isLiteral: Bool { segments.allSatisfy { if case .literal = $0 { true } else { false } } }

    /// Names used, first component only (`item` for `item.url`).
    public var variableNames: [String] {
        segments.compactMap { if case .variable(let path, _) = $0 { path[0] } else { nil } }
    }

    /// The text as written, placeholders included.
    public var description: String {
        segments.map { segment in
            switch segment {
            case .literal(let text): text
            case .variable(let path, _): "{{ \(path.joined(separator: ".")) }}"
            }
        }.joined()
    }
}
