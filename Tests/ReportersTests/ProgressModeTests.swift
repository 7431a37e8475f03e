import Foundation
import Testing
import Execution
import Reporters

@Suite struct ProgressModeTests {
    @Test func rawValuesAreTheContractSpelling() {
        #expect(ProgressMode.allCases.map(\.rawValue) == ["auto", "tty", "plain", "json"])
    }

    @Test(arguments: [ProgressMode.auto, .tty, .plain])
    func aFileGetsPlainLinesWhateverTheTerminalMode(mode: ProgressMode) throws {
        let output = try ConsoleFile()
        let observer = makeProgressObserver(mode: mode, console: output.console, environment: ["TERM": "xterm-256color"])
        #expect(observer is PlainLinesReporter)
    }

    @Test func jsonModeWritesJSON() throws {
        let output = try ConsoleFile()
        let observer = makeProgressObserver(mode: .json, console: output.console, environment: [:])
        #expect(observer is JSONLinesReporter)
    }

    @Test func aTerminalGetsTheBoardUnlessTERMIsDumb() throws {
        // A pseudo-terminal is the real thing a user's shell gives jobgraph. Glibc's module hides
        // posix_openpt, so open the multiplexer and use its ioctls (TIOCSPTLCK, TIOCGPTN: _IOW/_IOR('T',
        // 0x31/0x30, int), which Swift cannot import as macros).
        let primary = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        try #require(primary >= 0)
        defer { close(primary) }
        var unlock: Int32 = 0
        try #require(ioctl(primary, UInt(0x4004_5431), &unlock) == 0)
        var number: UInt32 = 0
        try #require(ioctl(primary, UInt(0x8004_5430), &number) == 0)
        let secondary = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
        try #require(secondary >= 0)
        defer { close(secondary) }
        let console = Console(descriptor: secondary)

        #expect(makeProgressObserver(mode: .auto, console: console, environment: ["TERM": "xterm"]) is TTYBoard)
        #expect(makeProgressObserver(mode: .tty, console: console, environment: ["TERM": "xterm"]) is TTYBoard)
        #expect(makeProgressObserver(mode: .auto, console: console, environment: ["TERM": "dumb"]) is PlainLinesReporter)
        #expect(makeProgressObserver(mode: .auto, console: console, environment: [:]) is PlainLinesReporter)

        var size = winsize()
        size.ws_col = 120
        size.ws_row = 40
        try #require(ioctl(primary, UInt(TIOCSWINSZ), &size) == 0)
        #expect(console.terminalSize() == TerminalSize(columns: 120, rows: 40))
    }
}
