import JobGraphBasics
import Foundation
import Glibc
import JobGraphSystem
import Testing

/// Spawn throughput of `EventLoop` + `ProcessSpawner` against a bare `posix_spawn` + `waitpid` loop.
///
/// Disabled unless `JOBGRAPH_BENCH` is set; run it alone and in release, since the bare loop reaps with
/// `waitpid(-1)` as make does:
/// `JOBGRAPH_BENCH=1 swift test -c release --scratch-path .build-mine --filter SpawnBenchmarkTests`
@Suite(.serialized) struct SpawnBenchmarkTests {
    static let isEnabled = ProcessInfo.processInfo.environment["JOBGRAPH_BENCH"] != nil
    static let count = 2_000
    static let parallelism = 2

    @Test(.enabled(if: isEnabled)) func eventLoopKeepsUpWithABarePosixSpawnLoop() async throws {
        let touch = try #require(ProgramLocator().locate("touch", searchPath: "/usr/bin:/bin"))
        _ = try measureBareLoop(touch: touch, count: 100)                 // warm-up: page cache, dentries
        _ = try await measureEventLoop(count: 100)

        // Wall time on a shared machine swings with others' load, so the parent's own CPU time (user +
        // system, children excluded) is reported too: it is the overhead this module adds, and load barely
        // moves it.
        var bare: [Duration] = [], loop: [Duration] = []
        var bareCPU: [Double] = [], loopCPU: [Double] = []
        for _ in 0..<2 {
            var cpu = processCPUSeconds()
            bare.append(try measureBareLoop(touch: touch, count: Self.count))
            bareCPU.append(processCPUSeconds() - cpu)
            cpu = processCPUSeconds()
            loop.append(try await measureEventLoop(count: Self.count))
            loopCPU.append(processCPUSeconds() - cpu)
        }
        let bestBare = try #require(bare.min()), bestLoop = try #require(loop.min())
        let ratio = seconds(bestLoop) / seconds(bestBare)
        func format(_ values: [Double]) -> String { values.map { String(format: "%.3f s", $0) }.joined(separator: ", ") }
        print("""
            spawn benchmark: \(Self.count) × touch, \(Self.parallelism) at a time (best of 2)
              bare posix_spawn + waitpid(-1): \(bestBare)   (runs: \(bare)); parent CPU \(format(bareCPU))
              EventLoop + ProcessSpawner:     \(bestLoop)   (runs: \(loop)); parent CPU \(format(loopCPU))
              wall-time ratio: \(String(format: "%.3f", ratio))
            """)
    }

    /// The baseline: what make does, minus output capture.
    private func measureBareLoop(touch: String, count: Int) throws -> Duration {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ContinuousClock()
        let start = clock.now
        var running = 0, next = 0, finished = 0
        let environment = testEnvironment.map { strdup($0) } + [nil]
        defer { for entry in environment { free(entry) } }
        while finished < count {
            while running < Self.parallelism, next < count {
                var pid: pid_t = 0
                let arguments = [strdup("touch"), strdup("\(directory.path)/f\(next)"), nil]
                defer { for argument in arguments { free(argument) } }
                let result = posix_spawn(&pid, touch, nil, nil, arguments, environment)
                try #require(result == 0)
                running += 1
                next += 1
            }
            var status: CInt = 0
            try #require(waitpid(-1, &status, 0) > 0)
            running -= 1
            finished += 1
        }
        let elapsed = clock.now - start
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).count == count)
        return elapsed
    }

    /// The engine's way: spawn the next child from the previous one's exit callback, on the loop thread.
    private func measureEventLoop(count: Int) async throws -> Duration {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        return try await withEventLoop { loop in
            let clock = ContinuousClock()
            let start = clock.now
            let failures: [String] = await withCheckedContinuation { continuation in
                let driver = TouchDriver(
                    loop: loop, directory: directory.path, total: count, done: continuation)
                loop.post {
                    for _ in 0..<Self.parallelism { driver.startNext() }
                }
            }
            let elapsed = clock.now - start
            #expect(failures.isEmpty)
            let created = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(created.count == count)
            return elapsed
        }
    }
}

/// Runs `touch fN` children on the loop, keeping `SpawnBenchmarkTests.parallelism` running.
private final class TouchDriver: ChildEventHandler {
    private struct Progress {
        var started = 0
        var finished = 0
        var failures: [String] = []
        var done: CheckedContinuation<[String], Never>?
    }

    private let loop: EventLoop
    private let spawner = ProcessSpawner()
    private let directory: String
    private let total: Int
    // Only touched on the loop thread; the `Locked` box is what makes the class Sendable, and is never contended.
    private let progress: Locked<Progress>

    init(loop: EventLoop, directory: String, total: Int, done: CheckedContinuation<[String], Never>) {
        self.loop = loop
        self.directory = directory
        self.total = total
        progress = Locked(Progress(done: done))
    }

    func startNext() {
        let index = progress.withLock { progress -> Int? in
            guard progress.started < total else { return nil }
            progress.started += 1
            return progress.started - 1
        }
        guard let index else { return }
        do {
            let child = try spawner.spawn(
                command: "touch f\(index)", environment: testEnvironment, workingDirectory: directory)
            loop.watch(child, token: ChildToken(rawValue: UInt64(index)), handler: self)
        } catch {
            record("spawn: \(error)")
        }
    }

    func child(_ token: ChildToken, printed line: [UInt8]) {
        progress.withLock { $0.failures.append(String(decoding: line, as: UTF8.self)) }
    }

    func child(_ token: ChildToken, exited status: TerminationStatus) {
        record(status.isSuccess ? nil : "f\(token.rawValue): \(status)")
    }

    func child(_ token: ChildToken, failed error: SystemError) {
        record("f\(token.rawValue): \(error)")
    }

    private func record(_ failure: String?) {
        let done = progress.withLock { progress -> (CheckedContinuation<[String], Never>, [String])? in
            if let failure { progress.failures.append(failure) }
            progress.finished += 1
            guard progress.finished == total, let done = progress.done else { return nil }
            progress.done = nil
            return (done, progress.failures)
        }
        if let (continuation, failures) = done {
            continuation.resume(returning: failures)
        } else {
            startNext()
        }
    }
}

/// User plus system CPU time of this process so far, children excluded.
private func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    func value(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return value(usage.ru_utime) + value(usage.ru_stime)
}

private func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
