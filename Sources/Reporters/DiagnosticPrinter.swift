import JobGraphBasics

/// Renders diagnostics as `FILE:LINE:COLUMN: error: message`, the form editors and CI annotators parse.
public struct DiagnosticPrinter: Sendable {
    /// When set, each diagnostic is followed by its source line and a caret under the column.
    public var sourceLines: (@Sendable (SourceLocation) -> String?)?

    public init(sourceLines: (@Sendable (SourceLocation) -> String?)? = nil) {
        self.sourceLines = sourceLines
    }

    /// One line per diagnostic, sorted by file and position, notes after the error they explain.
    public func render(_ diagnostics: Diagnostics) -> [String] {
        diagnostics.sorted.flatMap(render)
    }

    /// `3 errors found`, for the end of a listing a person reads; `nil` when there is no error.
    public func errorCountLine(_ diagnostics: Diagnostics) -> String? {
        diagnostics.errorCount > 0 ? String(counting: diagnostics.errorCount, "error") + " found" : nil
    }

    public func render(_ diagnostic: Diagnostic) -> [String] {
        let prefix = diagnostic.location.map { "\($0): " } ?? ""
        var lines = ["\(prefix)\(diagnostic.severity.rawValue): \(diagnostic.message)"]
        if let location = diagnostic.location, let source = sourceLines?(location) {
            lines.append(source)
            lines.append(String(repeating: " ", count: max(0, location.column - 1)) + "^")
        }
        return lines
    }
}
