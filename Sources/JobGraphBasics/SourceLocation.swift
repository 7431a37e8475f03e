/// A position in a source file, as a user's editor shows it.
///
/// `line` and `column` are 1-based; columns count Unicode scalars, as libyaml's marks do. Both are
/// stored in 32 bits (a file has fewer than 4 billion lines), since a large pipeline holds millions
/// of locations.
public struct SourceLocation: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The path as the user typed it.
    public var file: String
    private var storedLine: UInt32
    private var storedColumn: UInt32

    public var line: Int {
        get { Int(storedLine) }
        set { storedLine = UInt32(clamping: newValue) }
    }

    public var column: Int {
        get { Int(storedColumn) }
        set { storedColumn = UInt32(clamping: newValue) }
    }

    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.storedLine = UInt32(clamping: line)
        self.storedColumn = UInt32(clamping: column)
    }

    public static func < (lhs: SourceLocation, rhs: SourceLocation) -> Bool {
        (lhs.file, lhs.storedLine, lhs.storedColumn) < (rhs.file, rhs.storedLine, rhs.storedColumn)
    }

    /// `FILE:LINE:COLUMN`, the prefix compilers and editors understand.
    public var description: String { "\(file):\(line):\(column)" }
}
