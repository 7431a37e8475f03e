import Foundation
import Glibc
import JobGraphSystem
import JobGraphTestSupport
import Testing

/// What a watchdog does once its jobgraph has gone, on real processes: every process carrying the
/// session's mark is stopped, inside its group or out of it, a SIGTERM ignored or not; others are left alone.
@Suite(.hangLimit(minutes: 1)) struct SessionWatchdogTests {
    @Test func everyProcessWithTheMarkIsStoppedAndNoOther() async throws {
        let token = "test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let loop = try EventLoop()
        defer { loop.stop() }
        func start(_ command: String, mark: String) throws -> ChildRecorder {
            let child = try ProcessSpawner().spawn(SpawnConfiguration(
                executablePath: "/bin/sh", arguments: ["sh", "-c", command],
                environment: ["PATH=/usr/bin:/bin", "\(SessionWatchdog.variable)=\(mark)", "\(DescendantSweep.taskVariable)=t"]))
            let recorder = ChildRecorder()
            loop.watch(child, token: ChildToken(rawValue: UInt64(child.id.rawValue)), handler: recorder)
            return recorder
        }
        // A sleep in the shell's group that ignores SIGTERM, and one that left the group.
        let marked = try start("trap '' TERM; setsid sleep 300.551 & sleep 300.552 & wait", mark: token)
        let other = try start("exec sleep 300.553", mark: "another-session")
        #expect(await eventually { ["300.551", "300.552", "300.553"].allSatisfy { !ProcessTable.living(withArgument: $0).isEmpty } })

        let stopped = SessionWatchdog.stopMarked(token: token)
        #expect(stopped.map(\.command).sorted() == ["sh", "sleep", "sleep"], "\(stopped)")
        #expect(stopped.allSatisfy { $0.task == "t" })
        #expect(ProcessTable.living(withArgument: "300.551").isEmpty && ProcessTable.living(withArgument: "300.552").isEmpty)
        #expect(!ProcessTable.living(withArgument: "300.553").isEmpty, "a process of another session was stopped")
        let (_, end) = await marked.collect()
        #expect(end == .exited(.signalled(signal: SIGKILL, coreDumped: false)))

        for pid in ProcessTable.living(withArgument: "300.553") { kill(pid, SIGKILL) }
        _ = await other.collect()
    }
}
