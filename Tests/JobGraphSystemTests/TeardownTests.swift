import Glibc
import JobGraphSystem
import JobGraphTestSupport
import Testing

@Suite(.hangLimit(minutes: 1)) struct TeardownTests {
    @Test func groupSignalReachesGrandchildren() async throws {
        try await withEventLoop { loop in
            let child = try ProcessSpawner().spawn(
                command: "sleep 300 & echo started; sleep 300", environment: testEnvironment)
            let recorder = ChildRecorder()
            loop.watch(child, token: ChildToken(rawValue: 1), handler: recorder)
            var events = recorder.events.makeAsyncIterator()
            #expect(await events.next() == .line("started"))
            // The background sleep exists by now (it was forked before the echo); the other may be starting.
            let members = processes(inGroup: child.id)
            #expect(members.count >= 2)

            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                loop.tearDown(child.id, using: .terminate(grace: .seconds(20))) { done.resume() }
            }
            // SIGTERM sufficed: the shell died of it, well before the grace ran out.
            #expect(await events.next() == .exited(.signalled(signal: SIGTERM, coreDumped: false)))
            #expect(kill(-child.id.rawValue, 0) == -1 && errno == ESRCH)
            #expect(processes(inGroup: child.id).isEmpty)
            for pid in members { #expect(kill(pid, 0) == -1, "process \(pid) of the group survived") }
        }
    }

    @Test func groupIgnoringSIGTERMIsKilledAfterTheGrace() async throws {
        try await withEventLoop { loop in
            // The ignored disposition is inherited by the sleep, so only SIGKILL ends either process.
            let child = try ProcessSpawner().spawn(
                command: "trap '' TERM; echo ready; sleep 300; echo survived", environment: testEnvironment)
            let recorder = ChildRecorder()
            loop.watch(child, token: ChildToken(rawValue: 1), handler: recorder)
            var events = recorder.events.makeAsyncIterator()
            #expect(await events.next() == .line("ready"))

            let clock = ContinuousClock()
            let start = clock.now
            loop.tearDown(child.id, using: .terminate(grace: .milliseconds(200)))
            #expect(await events.next() == .exited(.signalled(signal: SIGKILL, coreDumped: false)))
            #expect(clock.now - start >= .milliseconds(200))
        }
    }

    @Test func signalGroupIgnoresAGroupThatIsGone() async throws {
        try await withEventLoop { loop in
            let child = try ProcessSpawner().spawn(command: "true", environment: testEnvironment)
            let recorder = ChildRecorder()
            loop.watch(child, token: ChildToken(rawValue: 1), handler: recorder)
            #expect(await recorder.collect().end == .exited(.exited(code: 0)))
            #expect(try child.id.signalGroup(.terminate) == false)
        }
    }
}
