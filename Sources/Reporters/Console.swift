#if canImport(Glibc)
import JobGraphBasics
import Glibc
#endif

/// The one place jobgraph writes to its standard output and error: whole lines, never interleaved.
///
/// Safe from any thread; each `write` reaches the descriptor as one `write(2)` sequence under a lock,
/// so lines from concurrent writers never tear.
public final class Console: Sendable {
    public static let standardOutput = Console(descriptor: 1)
    public static let standardError = Console(descriptor: 2)

    private let descriptor: Int32
    private let lock = Locked(())

    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Whether the descriptor is a terminal that understands cursor movement (`TERM` is not `dumb`).
    public func isInteractiveTerminal(environment: [String: String]) -> Bool {
        isatty(descriptor) == 1 && environment["TERM"].map { $0 != "dumb" && !$0.isEmpty } ?? false
    }

    /// The size of the terminal this console writes to, or `nil` when it is not a terminal.
    public func terminalSize() -> TerminalSize? { TerminalSize(descriptor: descriptor) }

    /// Writes each line followed by a newline.
    public func write(lines: [String]) {
        guard !lines.isEmpty else { return }
        var text = lines.joined(separator: "\n")
        text.append("\n")
        write(text)
    }

    public func write(line: String) { write(lines: [line]) }

    /// Writes text as is; the caller supplies any newlines.
    public func write(_ text: String) {
        var text = text
        lock.withLock { _ in
            text.withUTF8 { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        return  // a closed pipe: nothing sensible left to do with the output
                    }
                    offset += written
                }
            }
        }
    }
}
