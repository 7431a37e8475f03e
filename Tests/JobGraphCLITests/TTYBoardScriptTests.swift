import Foundation
import JobGraphTestSupport
import Testing

/// Runs `Tests/tty/board.sh`, which drives `jobgraph run` in a real terminal (tmux) and checks the live
/// board, the screen it leaves and the `TERM=dumb` fallback.
@Suite(.hangLimit(minutes: 1))
struct TTYBoardScriptTests {
    @Test func theLiveBoardWorksInARealTerminal() async throws {
        let tmux = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard tmux != nil else {
            Issue.record("tmux is not installed, so the terminal board cannot be tested: install it (apt-get install tmux)")
            return
        }
        let directory = try ScratchDirectory("jobgraph-tty")
        defer { directory.remove() }
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/tty/board.sh").path
        let binary = try JobGraphBinary.location()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script, binary.path]
        process.environment = JobGraphBinary.environment
        let output = directory.file("board.out")
        try directory.write("", to: "board.out")
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardOutput = handle
        process.standardError = handle
        let (exit, continuation) = AsyncStream.makeStream(of: Int32.self)
        process.terminationHandler = { process in
            continuation.yield(process.terminationStatus)
            continuation.finish()
        }
        try process.run()
        var status: Int32 = -1
        for await code in exit { status = code }
        if status == -1 { process.terminate() }  // cancelled by the time limit
        let text = directory.read("board.out") ?? ""
        #expect(status == 0, "\(text)")
        #expect(text.contains(" passed, 0 failed"), "\(text)")
    }
}
