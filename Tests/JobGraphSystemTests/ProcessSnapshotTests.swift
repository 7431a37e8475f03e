import Foundation
import Glibc
import JobGraphSystem
import Testing

/// `ProcessSnapshot` reads real processes: a child started here, whose executable's name holds spaces and
/// parentheses (which `/proc/<pid>/stat` does not escape), and whose environment carries a task's mark.
@Suite struct ProcessSnapshotTests {
    @Test func aChildIsSeenWithItsParentGroupStateAndEnvironment() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // A copy of `sleep` named so that a naive split of the stat line would misread every field.
        let program = directory.path + "/sl) (x p"
        try FileManager.default.copyItem(atPath: "/bin/sleep", toPath: program)
        let loop = try EventLoop()
        defer { loop.stop() }
        let child = try ProcessSpawner().spawn(SpawnConfiguration(
            executablePath: program, arguments: [program, "300"],
            environment: ["PATH=/usr/bin:/bin", "\(DescendantSweep.taskVariable)=photo[3]"]))
        let recorder = ChildRecorder()
        loop.watch(child, token: ChildToken(rawValue: 1), handler: recorder)

        // Until the exec is done, /proc shows this process's image under the child's pid, and the new
        // name comes a moment before the new environment: wait for both.
        var entry: ProcessSnapshot.Entry?
        for _ in 0..<2000 {
            entry = ProcessSnapshot.entry(of: child.id.rawValue)
            if entry?.command == "sl) (x p",
               ProcessSnapshot.environmentValue(DescendantSweep.taskVariable, of: child.id.rawValue) != nil { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        let found = try #require(entry)
        #expect(found.command == "sl) (x p")
        #expect(found.parent == getpid())
        #expect(found.group == child.id.rawValue)
        #expect(found.session == getsid(0))
        #expect(!found.isZombie)
        #expect(ProcessSnapshot.environmentValue(DescendantSweep.taskVariable, of: child.id.rawValue) == "photo[3]")
        #expect(ProcessSnapshot.environmentValue("HOME", of: child.id.rawValue) == nil)
        #expect(ProcessSnapshot().descendants(of: getpid()).contains { $0.id == child.id.rawValue })
        // The sweep at a run's end reads every process only when this says there may be a descendant.
        #expect(!ProcessSnapshot.hasNoChildren())

        _ = try child.id.signalGroup(.kill)
        let (_, end) = await recorder.collect()
        #expect(end == .exited(.signalled(signal: SIGKILL, coreDumped: false)))
        #expect(ProcessSnapshot.entry(of: child.id.rawValue) == nil)
    }
}
