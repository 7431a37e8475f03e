/// One problem found in a user's input, with where it is and a sentence the user can act on.
public struct Diagnostic: Hashable, Sendable {
    public enum Severity: String, Sendable, Comparable {
        case error, warning, note

        private var rank: Int {
            switch self {
            case .error: 0
            case .warning: 1
            case .note: 2
            }
        }

        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }
    }

    public var severity: Severity
    /// The node at fault; `nil` only for problems with no place in a file (an unreadable file).
    public var location: SourceLocation?
    /// Lower-case, no final period; quotes the user's text and offers the valid choices.
    public var message: String

    public init(_ severity: Severity, _ message: String, at location: SourceLocation?) {
        self.severity = severity
        self.message = message
        self.location = location
    }
}
