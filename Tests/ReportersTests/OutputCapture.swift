import Foundation
import Reporters
import Execution
import PipelineModel

/// A real `Console` writing to a temporary file, read back as lines: what a user piping jobgraph would see.
final class ConsoleFile {
    let url: URL
    let console: Console
    private let descriptor: Int32

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("reporters-\(UUID().uuidString).txt")
        descriptor = open(url.path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw CocoaError(.fileNoSuchFile) }
        console = Console(descriptor: descriptor)
    }

    deinit {
        close(descriptor)
        try? FileManager.default.removeItem(at: url)  // a leftover temp file is harmless
    }

    var text: String { (try? String(contentsOf: url, encoding: .utf8)) ?? "" }

    var lines: [String] {
        var lines = text.components(separatedBy: "\n")
        if lines.last == "" { lines.removeLast() }
        return lines
    }
}

/// Counts and keeps every write, to prove how often the board reaches the terminal.
final class CapturedWrites: TextSink {
    var writes: [String] = []
    func write(_ text: String) { writes.append(text) }
    var text: String { writes.joined() }
}

/// A tiny terminal: applies text, `\n`, `\r`, cursor-up (`ESC[nA`) and clear-to-end (`ESC[J`), so tests can
/// check what stays on screen rather than which bytes were sent.
struct Screen {
    private(set) var lines: [String] = [""]
    private var row = 0
    private var column = 0
    /// Escape sequences seen that this model does not know; a test expects none.
    private(set) var unknownEscapes: [String] = []

    mutating func apply(_ text: String) {
        var characters = Array(text)[...]
        while let character = characters.popFirst() {
            switch character {
            case "\n":
                row += 1
                column = 0
                if row == lines.count { lines.append("") }
            case "\r":
                column = 0
            case "\u{1B}":
                var sequence = ""
                while let next = characters.popFirst() {
                    sequence.append(next)
                    if next.isLetter { break }
                }
                escape(sequence)
            default:
                var line = Array(lines[row])
                while line.count < column { line.append(" ") }
                if column < line.count { line[column] = character } else { line.append(character) }
                lines[row] = String(line)
                column += 1
            }
        }
    }

    private mutating func escape(_ sequence: String) {
        if sequence == "[J" {
            lines[row] = String(lines[row].prefix(column))
            lines.removeSubrange((row + 1)...)
        } else if sequence.hasPrefix("["), sequence.hasSuffix("A"), let count = Int(sequence.dropFirst().dropLast()) {
            row = max(0, row - count)
        } else {
            unknownEscapes.append(sequence)
        }
    }

    /// The lines with text, as a user would read them after the run.
    var visibleLines: [String] {
        var visible = lines
        while visible.last == "" { visible.removeLast() }
        return visible
    }
}

/// Events with a fixed start time, so expected lines are exact.
enum Events {
    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    static func started(taskCount: Int = 3, jobs: Int = 2) -> RunEvent {
        .started(RunStart(pipelineFile: "photos.yaml", taskCount: taskCount, jobs: jobs, time: start))
    }

    static func transition(_ task: TaskID, _ from: TaskState, _ to: TaskState, at elapsed: Double, attempt: Int = 1,
                           queue: String = "default", exitCode: Int32? = nil, error: String? = nil,
                           duration: Double? = nil, reason: String? = nil, resources: Resources? = nil) -> RunEvent {
        var transition = TaskTransition(time: start.addingTimeInterval(elapsed), elapsed: elapsed, task: task, from: from,
                                        to: to, attempt: attempt, queue: queue, exitCode: exitCode, error: error,
                                        duration: duration)
        transition.reason = reason
        transition.resources = resources
        return .transition(transition)
    }
}
