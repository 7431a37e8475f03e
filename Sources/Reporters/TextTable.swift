/// Lays out rows in left-aligned columns separated by two spaces; trailing blanks are trimmed.
struct TextTable {
    var header: [String]
    var rows: [[String]] = []

    func render() -> [String] {
        let all = [header] + rows
        let columnCount = all.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columnCount)
        for row in all {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        return all.map { row in
            var line = ""
            for (column, cell) in row.enumerated() {
                line += cell
                if column < row.count - 1 {
                    line += String(repeating: " ", count: widths[column] - cell.count + 2)
                }
            }
            while line.last == " " { line.removeLast() }
            return line
        }
    }
}
