import Foundation
import JobGraphTestSupport
import Testing

/// Runs the scripts of `Tests/tty`, which drive `jobgraph run` in a real terminal (tmux): `board.sh` checks
/// the live board, the screen it leaves and the `TERM=dumb` fallback; `console.sh` the tasks that use the
/// terminal (`interactive`, `prompt`).
@Suite(.hangLimit(minutes: 1))
struct TTYBoardScriptTests {
    @Test(arguments: ["board.sh", "console.sh"])
    func theTerminalScriptPasses(_ name: String) async throws {
        let tmux = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard tmux != nil else {
            Issue.record("tmux is not installed, so the terminal board cannot be tested: install it (apt-get install tmux)")
            return
        }
        let directory = try ScratchDirectory("jobgraph-tty")
        defer { directory.remove() }
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/tty/" + name).path
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
