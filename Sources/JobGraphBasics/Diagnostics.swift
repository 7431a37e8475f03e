/// The problems collected while loading and checking a pipeline.
///
/// Passed `inout` through the decoding stages, which keep going past errors so the user sees every
/// problem at once. A note attaches to the error before it (a hop of a cycle, say).
public struct Diagnostics: Sendable {
    public private(set) var all: [Diagnostic] = []
    private var seen: Set<Diagnostic> = []
    /// Whether the last error or warning was kept; its notes follow its fate.
    private var lastKept = true

    public init() {}

    public var hasErrors: Bool { all.contains { $0.severity == .error } }
    public var errorCount: Int { all.count { $0.severity == .error } }

    /// Adds a diagnostic; an identical one (same place, same words) is kept once, since a
    /// `defaults` entry applied to many tasks would otherwise repeat its mistake for each. A note is
    /// kept exactly when the diagnostic it explains was kept, so two cycles sharing a hop both keep it.
    public mutating func append(_ diagnostic: Diagnostic) {
        if diagnostic.severity == .note {
            if lastKept { all.append(diagnostic) }
            return
        }
        lastKept = seen.insert(diagnostic).inserted
        if lastKept { all.append(diagnostic) }
    }

    public mutating func append(contentsOf other: Diagnostics) {
        for diagnostic in other.all { append(diagnostic) }
    }

    public mutating func error(_ message: String, at location: SourceLocation?) {
        append(Diagnostic(.error, message, at: location))
    }

    public mutating func warning(_ message: String, at location: SourceLocation?) {
        append(Diagnostic(.warning, message, at: location))
    }

    public mutating func note(_ message: String, at location: SourceLocation?) {
        append(Diagnostic(.note, message, at: location))
    }

    /// Errors and warnings by file and position; each note stays right after the diagnostic it explains.
    public var sorted: [Diagnostic] {
        var groups: [[Diagnostic]] = []
        for diagnostic in all {
            if diagnostic.severity == .note, !groups.isEmpty {
                groups[groups.count - 1].append(diagnostic)
            } else {
                groups.append([diagnostic])
            }
        }
        let ordered = groups.enumerated().sorted { left, right in
            let leftLocation = left.element[0].location, rightLocation = right.element[0].location
            switch (leftLocation, rightLocation) {
            case let (l?, r?) where l != r: return l < r
            case (nil, _?): return true
            case (_?, nil): return false
            default: return left.offset < right.offset
            }
        }
        return ordered.flatMap(\.element)
    }
}
