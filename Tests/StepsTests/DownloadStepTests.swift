import Foundation
import Glibc
import JobGraphBasics
import JobGraphSystem
import JobGraphTestSupport
import PipelineModel
import Testing
import Execution
@testable import Steps

/// Every download here talks real HTTP to a `LoopbackHTTPServer` on 127.0.0.1, and lands in a fresh
/// temporary folder, so "nothing is left" is checked by listing that folder.
@Suite struct DownloadStepTests {
    @Test func aDownloadThroughTheExecutorWritesExactlyTheServedBytesAndNoTemporaryFile() async throws {
        let size = 3 << 20
        let server = try LoopbackHTTPServer(routes: ["/big.bin": .generated(count: size)])
        defer { server.stop() }
        let place = try Place()
        defer { place.remove() }
        let loop = try EventLoop()
        defer { loop.stop() }
        let executor = LocalExecutor(loop: loop, logDirectory: place.path + "/logs")
        let probe = Probe()
        let work = TaskWork(id: "fetch", attempt: 1,
                            work: .download(url: server.url("/big.bin"), destination: place.path + "/big.bin", sha256: nil, maxBytes: nil),
                            workingDirectory: place.path, environment: [:], niceness: 0, timeout: nil, logPath: place.path + "/logs/fetch.log")
        _ = try executor.start(work, reporter: probe.reporter)

        #expect(try await probe.result(stopping: loop) == .succeeded)
        #expect(try Data(contentsOf: URL(fileURLWithPath: place.path + "/big.bin")) == Data(LoopbackHTTPServer.generatedBytes(0..<size)))
        #expect(place.entries() == ["big.bin"])
        #expect(probe.progress.last.map { [$0.bytes, $0.total] } == [Int64(size), Int64(size)])
    }

    @Test func aBodyWithoutContentLengthEndsWhenTheServerCloses() async throws {
        let body = Array("no length here\n".utf8)
        let server = try LoopbackHTTPServer(routes: ["/a.txt": .body(body, sendsLength: false)])
        defer { server.stop() }
        let place = try Place()
        defer { place.remove() }

        let result = try await place.download(server.url("/a.txt"), to: "a.txt")

        #expect(result == .succeeded)
        #expect(place.contents("a.txt") == body)
        #expect(place.entries() == ["a.txt"])
    }

    @Test func theDestinationFolderIsCreatedWhenMissing() async throws {
        let server = try LoopbackHTTPServer(routes: ["/a": .body(Array("a".utf8))])
        defer { server.stop() }
        let place = try Place()
        defer { place.remove() }

        #expect(try await place.download(server.url("/a"), to: "build/photos/a.txt") == .succeeded)
        #expect(place.contents("build/photos/a.txt") == Array("a".utf8))
    }

    @Test func aMatchingChecksumKeepsTheFile() async throws {
        let body = LoopbackHTTPServer.generatedBytes(0..<100_000)
        let server = try LoopbackHTTPServer(routes: ["/f": .body(body)])
        defer { server.stop() }
        let place = try Place()
        defer { place.remove() }

        let result = try await place.download(server.url("/f"), to: "f", sha256: SHA256.hex(of: body).uppercased())

        #expect(result == .succeeded)
        #expect(place.contents("f") == body)
    }

    @Test func aChecksumMismatchLeavesNoFileNotEvenAnEarlierOne() async throws {
        let body = Array("tampered\n".utf8)
        let server = try LoopbackHTTPServer(routes: ["/f": .body(body)])
        defer { server.stop() }
        let place = try Place()
        defer { place.remove() }
        try place.write("from an earlier run", to: "f")
        let expected = String(repeating: "ab", count: 32)

        let result = try await place.download(server.url("/f"), to: "f", sha256: expected)

        #expect(result == .failed(exitCode: nil, reason:
            "checksum mismatch for '\(server.url("/f"))': expected sha256 \(expected), got \(SHA256.hex(of: body))"))
        #expect(place.entries() == [])
    }

    @Test func aMissingFileFailsWithTheHTTPStatus() async throws {
        let server = try LoopbackHTTPServer(routes: [:])
        defer { server.stop() }
        let place = try Place()
        defer { place.remove() }

        let result = try await place.download(server.url("/missing.jpg"), to: "missing.jpg")

        #expect(result == .failed(exitCode: nil, reason: "HTTP 404 Not Found from '\(server.url("/missing.jpg"))'"))
        #expect(place.entries() == [])
    }

    @Test func aPortNobodyListensOnIsARefusedConnection() async throws {
        let url = "http://127.0.0.1:\(try LoopbackHTTPServer.unusedPort())/x"
        let place = try Place()
        defer { place.remove() }

        let result = try await place.download(url, to: "x")

        #expect(result == .failed(exitCode: nil, reason: "connection refused by '\(url)'"))
        #expect(place.entries() == [])
    }

    @Test func aServerThatNeverAcceptsIsAConnectTimeout() async throws {
        let server = try LoopbackHTTPServer(routes: [:], acceptsConnections: false)
        defer { server.stop() }
        let place = try Place()
        defer { place.remove() }

        let result = try await place.download(server.url("/x"), to: "x", limits: .init(connectTimeout: 0.5))

        #expect(result == .failed(exitCode: nil, reason: "no answer from '\(server.url("/x"))' within 0.5s (connect timeout)"))
        #expect(place.entries() == [])
    }

    @Test func aRedirectIsFollowed() async throws {
        let server = try LoopbackHTTPServer(routes: ["/old": .redirect(to: "/new", status: 301), "/new": .body(Array("moved\n".utf8))])
        defer { server.stop() }
        let place = try Place()
        defer { place.remove() }

        #expect(try await place.download(server.url("/old"), to: "f") == .succeeded)
        #expect(place.contents("f") == Array("moved\n".utf8))
        #expect(server.requests == ["/old", "/new"])
    }

    @Test func aRedirectLoopStopsAfterTenRedirects() async throws {
        let server = try LoopbackHTTPServer(routes: ["/loop": .redirect(to: "/loop")])
        defer { server.stop() }
        let place = try Place()
        defer { place.remove() }

        let result = try await place.download(server.url("/loop"), to: "f")

        #expect(result == .failed(exitCode: nil, reason: "too many redirects (more than 10) from '\(server.url("/loop"))'"))
        #expect(server.requests.count == 11)
        #expect(place.entries() == [])
    }

    @Test func aRedirectToAnotherSchemeIsRefused() async throws {
        let server = try LoopbackHTTPServer(routes: ["/a": .redirect(to: "https://127.0.0.1:1/b")])
        defer { server.stop() }
        let place = try Place()
        defer { place.remove() }

        let result = try await place.download(server.url("/a"), to: "f")

        #expect(result == .failed(exitCode: nil, reason: "refused a redirect to another scheme: '\(server.url("/a"))' -> 'https://127.0.0.1:1/b'"))
        #expect(place.entries() == [])
    }

    @Test func aContentLengthOverMaxBytesFailsBeforeTheBody() async throws {
        let server = try LoopbackHTTPServer(routes: ["/big": .generated(count: 10_000)])
        defer { server.stop() }
        let place = try Place()
        defer { place.remove() }

        let result = try await place.download(server.url("/big"), to: "big", maxBytes: 1_000)

        #expect(result == .failed(exitCode: nil, reason: "'\(server.url("/big"))' is larger than max_bytes (1000 bytes): its Content-Length is 10000"))
        #expect(place.entries() == [])
    }

    @Test func aBodyWithoutLengthStopsAsSoonAsItPassesMaxBytes() async throws {
        // 512 MiB at about 30 MB/s would take many seconds: the server sees the client hang up long before.
        let size = 512 << 20
        let server = try LoopbackHTTPServer(routes: ["/endless": .slow(count: size, chunk: 64 << 10, interval: 0.002, sendsLength: false)])
        defer { server.stop() }
        let place = try Place()
        defer { place.remove() }

        let result = try await place.download(server.url("/endless"), to: "endless", maxBytes: 100_000)

        #expect(result == .failed(exitCode: nil, reason: "'\(server.url("/endless"))' sent more than max_bytes (100000 bytes)"))
        #expect(place.entries() == [])
        #expect(await server.waitUntilIdle(timeout: 5))
        #expect(server.bodyBytesSent < 32 << 20)
    }

    @Test func aServerClosingMidBodyIsReportedWithTheByteCounts() async throws {
        let server = try LoopbackHTTPServer(routes: ["/cut": .truncated(declared: 100_000, sent: 40_000)])
        defer { server.stop() }
        let place = try Place()
        defer { place.remove() }

        let result = try await place.download(server.url("/cut"), to: "cut")

        #expect(result == .failed(exitCode: nil, reason: "the server closed the connection after 40000 of 100000 bytes of '\(server.url("/cut"))'"))
        #expect(place.entries() == [])
    }

    @Test func progressIsReportedFromZeroToTheTotalAndThrottled() async throws {
        // The throttle goes by time, so the test takes its extremes rather than counting against a clock:
        // unthrottled, every piece that arrives is reported; with an interval longer than any transfer,
        // only the start and the end are. Unthrottled, the server sends each piece once the last was
        // reported, so pieces arrive one by one even when the client is held up long enough for a timed
        // server to have sent them all.
        let server = try LoopbackHTTPServer(routes: ["/stepped": .stepped(count: 64 << 10, chunk: 8 << 10),
                                                     "/slow": .slow(count: 64 << 10, chunk: 8 << 10, interval: 0.02)])
        defer { server.stop() }
        let place = try Place()
        defer { place.remove() }
        let total = Int64(64 << 10)

        let unthrottled = Probe { server.acknowledge(bytes: Int($0.bytes)) }
        #expect(try await place.download(server.url("/stepped"), to: "all", limits: .init(progressInterval: .zero),
                                         probe: unthrottled) == .succeeded)
        let reports = unthrottled.progress
        #expect(reports.first.map { [$0.bytes, $0.total] } == [0, total])
        #expect(reports.last.map { [$0.bytes, $0.total] } == [total, total])
        #expect(reports.count >= 3, "no report between the start and the end")
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.bytes <= $1.bytes })

        let throttled = Probe()
        #expect(try await place.download(server.url("/slow"), to: "ends", limits: .init(progressInterval: .seconds(3600)),
                                         probe: throttled) == .succeeded)
        #expect(throttled.progress.map { [$0.bytes, $0.total] } == [[0, total], [total, total]])
    }

    @Test func terminatingMidTransferCancelsAndCleansUp() async throws {
        let server = try LoopbackHTTPServer(routes: ["/slow": .slow(count: 1 << 20, chunk: 16 << 10, interval: 0.05)])
        defer { server.stop() }
        let place = try Place()
        defer { place.remove() }
        let loop = try EventLoop()
        defer { loop.stop() }
        // Terminated from the progress callback itself, as soon as bytes arrive: a test task polling for
        // them could be held up by other tests long enough for the transfer to finish first.
        let running = Locked<(step: DownloadStep?, entriesWhenTerminated: [String]?)>((nil, nil))
        let probe = Probe { report in
            guard report.bytes > 0 else { return }
            let step = running.withLock { running -> DownloadStep? in
                guard running.entriesWhenTerminated == nil, let step = running.step else { return nil }
                running.entriesWhenTerminated = place.entries()
                return step
            }
            step?.terminate(grace: 5)
        }
        let step = DownloadStep.start(url: server.url("/slow"), destination: place.path + "/slow", sha256: nil, maxBytes: nil,
                                      timeout: nil, reporter: probe.reporter, loop: loop,
                                      limits: .init(progressInterval: .zero))
        running.withLock { $0.step = step }

        #expect(try await probe.result(stopping: loop) == .failed(exitCode: nil, reason: "cancelled while downloading '\(server.url("/slow"))'"))
        // While receiving, the only file was the hidden temporary one beside the destination.
        let during = try #require(running.withLock { $0.entriesWhenTerminated })
        #expect(during.count == 1 && during[0].hasPrefix(".slow.part-"))
        #expect(place.entries() == [])
    }

    @Test func theTaskTimeoutEndsASlowDownload() async throws {
        let server = try LoopbackHTTPServer(routes: ["/slow": .slow(count: 1 << 20, chunk: 1 << 10, interval: 0.05)])
        defer { server.stop() }
        let place = try Place()
        defer { place.remove() }

        let result = try await place.download(server.url("/slow"), to: "slow", timeout: 0.5)

        guard case .failed(nil, let reason, _) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(reason.hasPrefix("timed out after 0.5s downloading '\(server.url("/slow"))' ("))
        #expect(reason.hasSuffix(" bytes received)"))
        #expect(place.entries() == [])
    }

    @Test(arguments: ["ftp://127.0.0.1/x", "not a url", "http:///nohost"])
    func aURLThatIsNotHTTPFailsAtOnce(url: String) async throws {
        let place = try Place()
        defer { place.remove() }

        let result = try await place.download(url, to: "x")

        #expect(result == .failed(exitCode: nil, reason: "'\(url)' is not an http or https URL"))
        #expect(place.entries() == [])
    }
}

// MARK: - Helpers

/// A fresh temporary folder to download into.
private struct Place: Sendable {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/jobgraph-download-XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        path = String(cString: created)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)   // best effort: a leftover temp folder harms nothing
    }

    /// Names in the folder, hidden ones included (a temporary download is hidden), sorted.
    func entries() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    func contents(_ name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path + "/" + name).map { Array($0) }
    }

    func write(_ text: String, to name: String) throws {
        try text.write(toFile: path + "/" + name, atomically: false, encoding: .utf8)
    }

    /// Runs one download to `name` in this folder and waits for its end.
    func download(_ url: String, to name: String, sha256: String? = nil, maxBytes: Int? = nil, timeout: Double? = nil,
                  limits: DownloadStep.Limits = .init(), probe: Probe = Probe()) async throws -> TaskResult {
        let loop = try EventLoop()
        defer { loop.stop() }
        _ = DownloadStep.start(url: url, destination: path + "/" + name, sha256: sha256, maxBytes: maxBytes, timeout: timeout,
                               reporter: probe.reporter, loop: loop, limits: limits)
        return try await probe.result(stopping: loop)
    }
}

/// Records what a download reports, and lets a test await its end.
private final class Probe: Sendable {
    struct Report: Sendable {
        var bytes: Int64
        var total: Int64?
    }

    private struct State {
        var progress: [Report] = []
        var result: TaskResult?
        var finishCount = 0
    }

    private let state = Locked(State())
    private let onProgress: @Sendable (Report) -> Void

    /// - Parameter onProgress: called with each report, on the thread that reports it.
    init(onProgress: @escaping @Sendable (Report) -> Void = { _ in }) {
        self.onProgress = onProgress
    }

    var reporter: TaskReporter {
        TaskReporter(
            output: { _ in },
            progress: { [self] bytes, total in
                let report = Report(bytes: bytes, total: total)
                state.withLock { $0.progress.append(report) }
                onProgress(report)
            },
            finished: { [self] result in
                state.withLock { state in
                    state.finishCount += 1
                    state.result = result
                }
            })
    }

    var progress: [Report] {
        state.withLock { $0.progress }
    }

    /// The attempt's result, once `finished` was called. Then `loop`, the download's, is stopped (its
    /// thread joined), so none of the download's timers can still end it: `finished` must have been called
    /// exactly once by then.
    func result(stopping loop: EventLoop) async throws -> TaskResult {
        try await waitUntil("the download to finish") { $0.result != nil }
        loop.stop()
        let (result, count) = state.withLock { ($0.result, $0.finishCount) }
        #expect(count == 1, "finished must be called exactly once")
        return try #require(result)
    }

    private func waitUntil(_ what: String, _ condition: (State) -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(120)   // a hang guard, never the expected wait
        while !state.withLock({ condition($0) }) {
            guard ContinuousClock.now < deadline else {
                Issue.record("gave up waiting for \(what)")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
