/// Lays out rows in left-aligned columns separated by two spaces; trailing blanks are trimmed.
struct TextTable {
    var header: [String]
    var rows: [[String]] = []

    func render() -> [String] {
        let all = [header] + rows
        let columnCount = all.map(\.count).max() ?? 0
        let cellWidths = all.map { $0.map(Self.width) }
        var widths = [Int](repeating: 0, count: columnCount)
        for row in cellWidths {
            for (column, width) in row.enumerated() { widths[column] = max(widths[column], width) }
        }
        // Built as bytes: appending `String`s and padding made the text of a 60,000-row dry run a tenth of its
        // time (perf, the 20,000-sample dry run of Benchmarks/snakemake.sh).
        var line: [UInt8] = []
        return zip(all, cellWidths).map { row, rowWidths in
            line.removeAll(keepingCapacity: true)
            for (column, cell) in row.enumerated() {
                line.append(contentsOf: cell.utf8)
                if column < row.count - 1 {
                    line.append(contentsOf: repeatElement(UInt8(ascii: " "), count: widths[column] - rowWidths[column] + 2))
                }
            }
            while line.last == UInt8(ascii: " ") { line.removeLast() }
            return String(decoding: line, as: UTF8.self)
        }
    }

    /// The columns a cell takes: its characters, counted by bytes when all are ASCII, as most cells are.
    private static func width(_ cell: String) -> Int {
        cell.utf8.allSatisfy { $0 < 0x80 } ? cell.utf8.count : cell.count
    }
}
