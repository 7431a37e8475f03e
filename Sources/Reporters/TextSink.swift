/// Where a reporter writes: whole lines, or for the live board one whole redraw, each call reaching the
/// output as one piece so it never interleaves with another writer's text.
///
/// `Console` is the one implementation that reaches stdout and stderr; tests may capture instead.
public protocol TextSink: AnyObject {
    /// Writes text as is; the caller supplies any newlines and escape sequences.
    func write(_ text: String)
    /// Writes each line followed by a newline, as one piece.
    func write(lines: [String])
}

extension TextSink {
    /// Writes each line followed by a newline, as one `write(_:)` call.
    public func write(lines: [String]) {
        guard !lines.isEmpty else { return }
        write(lines.joined(separator: "\n") + "\n")
    }
}

extension Console: TextSink {}
