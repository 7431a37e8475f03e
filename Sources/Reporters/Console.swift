#if canImport(Glibc)
import JobGraphBasics
import Glibc
#endif
import Execution

/// The one place jobgraph writes to its standard output and error: whole lines, never interleaved.
///
/// Safe from any thread; each `write` reaches the descriptor as one `write(2)` sequence under a lock,
/// so lines from concurrent writers never tear.
public final class Console: Sendable {
    public static let standardOutput = Console(descriptor: 1)
    public static let standardError = Console(descriptor: 2)

    private let descriptor: Int32
    private let lock = Locked(())
    /// Where a failed write is reported (a full disk under a redirected output); `nil` until a run sets it.
    private let failures = Locked<WriteFailures?>(nil)

    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// From now on, a write that fails (other than a closed pipe) is reported to `failures`, once.
    public func reportFailures(to failures: WriteFailures) {
        self.failures.withLock { $0 = failures }
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
        let failure = lock.withLock { _ in
            text.withUTF8 { buffer in FileCalls.writeAll(UnsafeRawBufferPointer(buffer), to: descriptor) }
        }
        // A closed pipe (`jobgraph run … | head`) is the reader's choice, not a fault worth a word.
        guard let failure, failure != EPIPE else { return }
        failures.withLock { $0 }?.record(.console, path: descriptor == 2 ? "standard error" : "standard output", errno: failure)
    }
}
