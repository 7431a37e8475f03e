/// A position in a source file, as a user's editor shows it.
///
/// `line` and `column` are 1-based; columns count Unicode scalars, as libyaml's marks do.
public struct SourceLocation: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The path as the user typed it.
    public var file: String
    public var line: Int
    public var column: Int

    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    public static func < (lhs: SourceLocation, rhs: SourceLocation) -> Bool {
        (lhs.file, lhs.line, lhs.column) < (rhs.file, rhs.line, rhs.column)
    }

    /// `FILE:LINE:COLUMN`, the prefix compilers and editors understand.
    public var description: String { "\(file):\(line):\(column)" }
}
