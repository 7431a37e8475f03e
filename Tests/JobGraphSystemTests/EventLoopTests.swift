import JobGraphBasics
import Foundation
import Glibc
import JobGraphSystem
import JobGraphTestSupport
import Testing

@Suite(.hangLimit(minutes: 1)) struct EventLoopTests {
    @Test func timersFireInDeadlineOrderAndNotBeforeTheirDelay() async throws {
        // A deadline is the delay from the moment `schedule` is called. `b` (30 ms) is scheduled before `a`
        // (10 ms): `a`'s deadline is the earlier only if less than 20 ms pass between the two calls, which a
        // loaded machine does not promise. So the monotonic clock (the loop's) is read around the calls, and
        // an attempt that took longer, whose order says nothing, is made again. Scheduled on the loop
        // thread, no timer can fire while the others are being scheduled.
        try await withEventLoop { loop in
            while true {
                let fired = Locked<[String]>([])
                let scheduling = Locked<(before: UInt64, after: UInt64)>((0, 0))
                let lastFiredAt: UInt64 = await withCheckedContinuation { continuation in
                    loop.post {
                        let before = monotonicNanoseconds()
                        loop.schedule(after: .milliseconds(30)) { fired.withLock { $0.append("b") } }
                        loop.schedule(after: .milliseconds(10)) { fired.withLock { $0.append("a") } }
                        let cancelled = loop.schedule(after: .milliseconds(20)) { fired.withLock { $0.append("cancelled") } }
                        loop.cancel(cancelled)
                        // `c` is last whatever the clock did: its delay is the longest and it is scheduled last.
                        loop.schedule(after: .milliseconds(50)) {
                            fired.withLock { $0.append("c") }
                            continuation.resume(returning: monotonicNanoseconds())
                        }
                        scheduling.withLock { $0 = (before, monotonicNanoseconds()) }
                    }
                }
                let (before, after) = scheduling.withLock { $0 }
                #expect(lastFiredAt - before >= 50_000_000, "c fired before its delay")
                guard after - before < 20_000_000 else { continue }
                #expect(fired.withLock { $0 } == ["a", "b", "c"])
                return
            }
        }
    }

    @Test func postedWorkRunsOnTheLoopThread() async throws {
        try await withEventLoop { loop in
            let posterWasLoopThread = Locked<Bool?>(nil)
            let ranOnLoopThread: Bool = await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    posterWasLoopThread.withLock { $0 = loop.isCurrentThread }
                    let accepted = loop.post { continuation.resume(returning: loop.isCurrentThread) }
                    #expect(accepted)
                }
            }
            #expect(ranOnLoopThread)
            #expect(posterWasLoopThread.withLock { $0 } == false)
        }
    }

    @Test func signalArrivesThroughTheCallback() async throws {
        let (signals, continuation) = AsyncStream.makeStream(of: ProcessSignal.self)
        try await withEventLoop(signals: [.user1, .user2], onSignal: { continuation.yield($0) }) { loop in
            // Sent to the loop thread itself, which blocks the set: the test process's other threads do not,
            // and would take the default action (termination) for a process-wide SIGUSR1.
            loop.post { raise(SIGUSR1) }
            var iterator = signals.makeAsyncIterator()
            #expect(await iterator.next() == .user1)
        }
    }

    @Test func childWatchedFromTheExitCallbackRunsNext() async throws {
        // The scheduler's fast path: start the next task from the previous one's exit, on the loop thread.
        try await withEventLoop { loop in
            let spawner = ProcessSpawner()
            let results = Locked<[String]>([])
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                let second = ChildCallbacks(printed: { _, line in
                    results.withLock { $0.append(String(decoding: line, as: UTF8.self)) }
                }, finished: { _, _ in done.resume() })
                let first = ChildCallbacks(printed: { _, line in
                    results.withLock { $0.append(String(decoding: line, as: UTF8.self)) }
                }, finished: { _, result in
                    let status = (try? result.get()).map(String.init(describing:)) ?? "failed"
                    results.withLock { $0.append("first: \(status)") }
                    do {
                        let child = try spawner.spawn(command: "echo second", environment: testEnvironment)
                        loop.watch(child, token: ChildToken(rawValue: 2), handler: second)
                    } catch {
                        results.withLock { $0.append("spawn failed: \(error)") }
                        done.resume()
                    }
                })
                do {
                    let child = try spawner.spawn(command: "echo first", environment: testEnvironment)
                    loop.watch(child, token: ChildToken(rawValue: 1), handler: first)
                } catch {
                    results.withLock { $0.append("spawn failed: \(error)") }
                    done.resume()
                }
            }
            #expect(results.withLock { $0 } == ["first", "first: exit code 0", "second"])
        }
    }

    @Test(arguments: [true, false])
    func everyLineAChildPrintsJustBeforeItExitsComesBeforeItsExit(holdsOutputOpen: Bool) async throws {
        // 2,000 lines written at the end, more than the loop reads at once: with the pipe held open, the loop
        // learns of the exit first and reads them all then.
        try await withEventLoop { loop in
            let result = try await run("sh -c 'i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done'", on: loop,
                                       holdsOutputOpen: holdsOutputOpen)
            #expect(result.lines == (0..<2000).map { "line\($0)" })
            #expect(result.end == .exited(.exited(code: 0)))
        }
    }

    @Test(arguments: [true, false])
    func aDescendantStillHoldingTheOutputDelaysTheEndUntilItCloses(holdsOutputOpen: Bool) async throws {
        // The shell exits at once; what it left in the background prints later, and the child ends after that.
        try await withEventLoop { loop in
            let clock = ContinuousClock()
            let start = clock.now
            let result = try await run("sh -c '(sleep 0.3; echo late) & echo early'", on: loop, holdsOutputOpen: holdsOutputOpen)
            #expect(result.lines == ["early", "late"])
            #expect(result.end == .exited(.exited(code: 0)))
            #expect(clock.now - start >= .milliseconds(300))
        }
    }

    @Test func watchingAfterStopKillsTheChildAndReportsCancellation() async throws {
        let loop = try EventLoop()
        loop.stop()
        let child = try ProcessSpawner().spawn(command: "sleep 300", environment: testEnvironment)
        let recorder = ChildRecorder()
        loop.watch(child, token: ChildToken(rawValue: 1), handler: recorder)
        let result = await recorder.collect()
        #expect(result.end == .failed(SystemError("EventLoop.watch", errno: .canceled)))
        #expect(!child.id.groupExists)
    }
}

/// CLOCK_MONOTONIC in nanoseconds, the clock the loop's timers use.
private func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
