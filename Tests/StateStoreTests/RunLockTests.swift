import Foundation
import Glibc
import JobGraphBasics
import JobGraphTestSupport
import Testing
@testable import StateStore

/// The run lock across processes: the second `jobgraph` run must be refused, naming the first's pid.
@Suite struct RunLockTests {
    /// A shell that takes the lock the way a second jobgraph would, writes its pid, says `locked`, and
    /// holds it until its standard input closes.
    func holder(of path: String) throws -> Child {
        let script = """
            exec 9<>"$1" || exit 4
            flock -n 9 || exit 3
            printf '%s\\n' "$$" >&9
            echo locked
            read ignored || true
            """
        return try Child("/bin/sh", ["-c", script, "holder", path])
    }

    @Test func anotherProcessHoldingTheLockIsNamedByItsPid() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try StateStore.open(directory: directory.path)
        let child = try holder(of: store.lockPath(for: "p.yaml"))
        try #require(await child.readLine() == "locked")

        let error = #expect(throws: StateStoreError.self) { try store.acquireRunLock(for: "p.yaml") }
        #expect(error == .runLockHeld(pid: child.pid))
        #expect(error?.description == "another jobgraph run (pid \(child.pid)) is using .jobgraph/; wait for it or pass --wait")

        try child.closeInput()
        #expect(await child.wait() == 0)
        let lock = try store.acquireRunLock(for: "p.yaml")
        #expect(lock.isHeld)
        #expect(try String(contentsOfFile: store.lockPath(for: "p.yaml"), encoding: .utf8) == "\(getpid())\n")
    }

    @Test func aHolderKilledWithSIGKILLLeavesNoStaleLock() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try StateStore.open(directory: directory.path)
        let child = try holder(of: store.lockPath(for: "p.yaml"))
        try #require(await child.readLine() == "locked")
        kill(child.pid, SIGKILL)
        _ = await child.wait()
        let lock = try store.acquireRunLock(for: "p.yaml")
        #expect(lock.isHeld)
    }

    @Test func whileWeHoldItAnotherProcessCannotTakeIt() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try StateStore.open(directory: directory.path)
        let lock = try store.acquireRunLock(for: "p.yaml")
        #expect(await runToEnd("/usr/bin/flock", ["-n", store.lockPath(for: "p.yaml"), "true"]) == 1)
        lock.release()
        lock.release()  // twice is harmless
        #expect(!lock.isHeld)
        #expect(try String(contentsOfFile: store.lockPath(for: "p.yaml"), encoding: .utf8) == "")
        #expect(await runToEnd("/usr/bin/flock", ["-n", store.lockPath(for: "p.yaml"), "true"]) == 0)
    }

    @Test func childProcessesDoNotInheritTheLock() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try StateStore.open(directory: directory.path)
        let lock = try store.acquireRunLock(for: "p.yaml")
        // posix_spawn without file actions: the child gets every descriptor not marked close-on-exec.
        var pid: pid_t = 0
        let arguments = ["/bin/sleep", "30"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        try #require(posix_spawn(&pid, "/bin/sleep", nil, nil, &argv, environ) == 0)
        defer {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        lock.release()
        #expect(await runToEnd("/usr/bin/flock", ["-n", store.lockPath(for: "p.yaml"), "true"]) == 0)
    }

    @Test func waitingBlocksUntilTheHolderLetsGo() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try StateStore.open(directory: directory.path)
        let child = try holder(of: store.lockPath(for: "p.yaml"))
        try #require(await child.readLine() == "locked")

        let acquired = Locked<RunLock?>(nil)
        // Blocked in `flock` on a thread of its own, not one of Swift's concurrency.
        let waiter = Task { () throws -> Void in
            let lock = try await onThreadOfItsOwn { Result { try store.waitForRunLock(for: "p.yaml") } }.get()
            acquired.withLock { $0 = lock }
        }
        #expect(await eventually { ProcessTable.waitsForLock(getpid(), on: store.lockPath(for: "p.yaml")) })
        #expect(acquired.withLock { $0 } == nil)
        try child.closeInput()
        #expect(await child.wait() == 0)
        try await waiter.value
        #expect(acquired.withLock { $0?.isHeld } == true)
    }
}
