import JobGraphBasics
import YAMLNodes

/// The raw bytes of a pipeline file, for finding where a `{{` inside a scalar is written.
///
/// A scalar's text is unquoted, unescaped and folded, so offsets in it are not offsets in the file;
/// instead the raw characters between the scalar's start and end marks are searched for the same
/// `{{` openings, in order. Escapes that produce braces or fold them together make the counts differ,
/// and then callers fall back to the scalar's own start.
struct SourceText {
    private let bytes: [UInt8]
    /// Where lines start; built on first use, since most files have no `{{` to locate and a
    /// million-line file would spend a pass and 8 MB on it for nothing (callgrind: 1.2% of a load).
    private let lines: LineTable
    /// libyaml reads UTF-16 too, but then its marks do not match these bytes.
    private let isUTF16: Bool

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.lines = LineTable(bytes)
        self.isUTF16 = bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE])
    }

    /// Where each non-overlapping `{{` of the scalar is written, or `nil` when that cannot be told exactly.
    func openingLocations(in node: YAMLNode, expectedCount: Int) -> [SourceLocation]? {
        guard !isUTF16, let scalar = node.scalar, let end = scalar.end,
              var offset = byteOffset(line: node.location.line, column: node.location.column),
              let endOffset = byteOffset(line: end.line, column: end.column), offset <= endOffset
        else { return nil }
        var line = node.location.line, column = node.location.column
        func advance() {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\n") || (byte == UInt8(ascii: "\r") && (offset + 1 >= bytes.count || bytes[offset + 1] != UInt8(ascii: "\n"))) {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80, byte != UInt8(ascii: "\r") {
                column += 1
            }
            offset += 1
        }
        if scalar.style == .literal || scalar.style == .folded {
            // Skip the header (`|-`, `>2`, and a comment that might itself hold braces).
            while offset < endOffset, bytes[offset] != UInt8(ascii: "\n"), bytes[offset] != UInt8(ascii: "\r") { advance() }
        }
        var found: [SourceLocation] = []
        found.reserveCapacity(expectedCount)
        while offset < endOffset {
            if bytes[offset] == UInt8(ascii: "{"), offset + 1 < endOffset, bytes[offset + 1] == UInt8(ascii: "{") {
                found.append(SourceLocation(file: node.location.file, line: line, column: column))
                if found.count > expectedCount { return nil }
                advance()
            }
            advance()
        }
        return found.count == expectedCount ? found : nil
    }

    /// The byte offset of a 1-based line and column (columns count Unicode scalars, as libyaml's do).
    private func byteOffset(line: Int, column targetColumn: Int) -> Int? {
        let lineStarts = lines.starts
        guard line >= 1, line <= lineStarts.count, targetColumn >= 1 else { return nil }
        let start = lineStarts[line - 1]
        if lines.isASCII {
            let offset = start + targetColumn - 1
            return offset <= bytes.count ? offset : nil
        }
        // Walking the line costs its length; only files with non-ASCII text take this path.
        var offset = start, column = 1
        while column < targetColumn {
            guard offset < bytes.count else { return nil }
            offset += 1
            while offset < bytes.count, bytes[offset] & 0xC0 == 0x80 { offset += 1 }
            column += 1
        }
        return offset
    }
}

/// A file's line starts, computed on first use (one loader call, one thread).
private final class LineTable {
    private let bytes: [UInt8]
    private var computed: (starts: [Int], isASCII: Bool)?

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Byte offset of each line's first character; line 1 starts after a UTF-8 byte-order mark.
    var starts: [Int] { table.starts }
    /// Whether columns can be turned into byte offsets by addition (no multi-byte characters).
    var isASCII: Bool { table.isASCII }

    private var table: (starts: [Int], isASCII: Bool) {
        if let computed { return computed }
        var starts: [Int] = []
        let bomLength = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        starts.append(bomLength)
        var ascii = true
        var index = bomLength
        while index < bytes.count {
            let byte = bytes[index]
            if byte >= 0x80 { ascii = false }
            if byte == UInt8(ascii: "\n") {
                starts.append(index + 1)
            } else if byte == UInt8(ascii: "\r"), index + 1 >= bytes.count || bytes[index + 1] != UInt8(ascii: "\n") {
                starts.append(index + 1)
            }
            index += 1
        }
        computed = (starts, ascii)
        return (starts, ascii)
    }
}
