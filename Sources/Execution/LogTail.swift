import Foundation

/// Reads the end of a task's log for the summary.
enum LogTail {
    /// The last `count` lines of the file, reading at most its last 64 KiB; empty if it cannot be read.
    static func lastLines(of path: String, count: Int) -> [String] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }  // closing a read-only handle cannot lose data
        let size = (try? handle.seekToEnd()) ?? 0
        let start = size > 65_536 ? size - 65_536 : 0
        guard (try? handle.seek(toOffset: start)) != nil, let data = try? handle.readToEnd() else { return [] }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let trimmed = lines.last == "" ? lines.dropLast() : lines[...]
        return trimmed.suffix(count).map(String.init)
    }
}
