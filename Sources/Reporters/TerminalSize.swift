#if canImport(Glibc)
import Glibc
#endif

/// A terminal's size in character cells, which bounds what the live board draws.
public struct TerminalSize: Hashable, Sendable {
    /// Characters per line.
    public var columns: Int
    /// Lines on the screen.
    public var rows: Int

    /// A size of at least one cell each way.
    public init(columns: Int, rows: Int) {
        self.columns = max(1, columns)
        self.rows = max(1, rows)
    }

    /// The classic 80x24, used when the terminal does not say.
    public static let fallback = TerminalSize(columns: 80, rows: 24)

    /// The size the terminal on `descriptor` reports (`ioctl(TIOCGWINSZ)`), or `nil` when it reports none.
    public init?(descriptor: Int32) {
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return nil }
        self.init(columns: Int(size.ws_col), rows: Int(size.ws_row))
    }
}
