import CCurl
import Foundation
import JobGraphBasics
import Execution
import JobGraphSystem

/// One attempt of a `download` task: an HTTP or HTTPS GET streamed into a temporary file beside the
/// destination, hashed on the way when `sha256` is given, flushed to disk and renamed into place only
/// once complete and verified. After any failure nothing is left at the destination, nor any temporary
/// file (contract: "download ... mismatch fails the task and leaves no file at `to`").
///
/// Every failure has its own reason naming the URL (`DownloadFailure`). Retries are the Runner's: it
/// starts a new attempt. `terminate` and `kill` cancel the transfer, clean up and report a failure.
///
/// The HTTP client is libcurl, through `HTTPTransfer`, which loads it on the first download. It was
/// URLSession, chosen over AsyncHTTPClient 1.37.0 after measuring both against `curl` on loopback
/// (release builds, median of 3, the 2-core machine nearly idle, Python's `http.server`):
///
/// | | curl | URLSession | AsyncHTTPClient |
/// | --- | --- | --- | --- |
/// | one 200 MB file | 0.30 s | 0.63 s | 0.34 s |
/// | CPU time for it (user + sys) | 0.30 s | 0.90 s | 0.28 s |
/// | peak memory for it | 11 MB | 42-73 MB | 20 MB |
/// | clean debug build of the client | - | none: in the toolchain | 290 s (720 s on a busy machine) |
///
/// AsyncHTTPClient's build (SwiftNIO, BoringSSL) would add five to twelve minutes to every CI run,
/// twice. URLSession was libcurl underneath, but linking FoundationNetworking loaded libcurl and the
/// libraries it needs into every command (6 ms of a 13 ms start), and it read ahead without
/// back-pressure. libcurl itself, called on a thread of the step's own, has neither cost, writes each
/// piece as it is read, and leaves each redirect to `transferRedirected`. The same 200 MB file through
/// it: 0.19-0.34 s and a peak of 35 MB for the whole jobgraph process, against 0.34-0.50 s and
/// 69-113 MB through URLSession (`/usr/bin/time`, `Benchmarks/download.sh`).
///
/// The connect timeout here runs until the response head arrives (a server that accepts and never
/// answers is caught too); after `terminate`, `max_bytes` or a timeout the step reports at once and
/// the transfer's thread stops at libcurl's next callback, writing nothing more.
///
/// `@unchecked Sendable`: the mutable state lives in `state`, a `Locked` box; the rest is immutable.
final class DownloadStep: TaskExecution, HTTPTransferDelegate, @unchecked Sendable {
    /// Limits that are not in the pipeline file; tests shorten them.
    struct Limits: Sendable {
        /// Seconds from the start (or from following a redirect) until the response head must arrive.
        var connectTimeout: Double = 10
        /// Seconds without any data in the middle of a body before the transfer is abandoned.
        var stallTimeout: Double = 60
        /// Redirects followed at most.
        var maximumRedirects = 10
        /// Shortest time between two progress reports.
        var progressInterval: Duration = .milliseconds(250)
    }

    private enum Phase {
        case starting, transferring, committing, ended
    }

    private struct State {
        var phase = Phase.starting
        var file: PartialFile?
        var hasher: SHA256?
        var transfer: HTTPTransfer?
        var hasResponse = false
        var received: Int64 = 0
        var expected: Int64?
        var redirects = 0
        var connectTimer: TimerID?
        /// Tells a connect timer that fires late, after a redirect restarted it, that it is stale.
        var connectGeneration = 0
        var overallTimer: TimerID?
        var lastProgress: ContinuousClock.Instant?
    }

    private let url: String
    private let destination: String
    private let sha256: String?
    private let maxBytes: Int?
    private let timeout: Double?
    private let limits: Limits
    private let reporter: TaskReporter
    private let loop: EventLoop
    private let clock = ContinuousClock()
    private let state = Locked(State())

    /// - Parameters:
    ///   - destination: absolute path of the file to create.
    ///   - timeout: the task's `timeout` in seconds, for the whole transfer.
    ///   - loop: runs the timers; it must outlive the attempt.
    init(url: String, destination: String, sha256: String?, maxBytes: Int?, timeout: Double?, reporter: TaskReporter,
         loop: EventLoop, limits: Limits = Limits()) {
        self.url = url
        self.destination = destination
        self.sha256 = sha256?.lowercased()
        self.maxBytes = maxBytes
        self.timeout = timeout
        self.reporter = reporter
        self.loop = loop
        self.limits = limits
    }

    /// Starts the transfer and returns at once; the reporter hears of progress and of the end.
    static func start(url: String, destination: String, sha256: String?, maxBytes: Int?, timeout: Double?,
                      reporter: TaskReporter, loop: EventLoop, limits: Limits = Limits()) -> DownloadStep {
        let step = DownloadStep(url: url, destination: destination, sha256: sha256, maxBytes: maxBytes, timeout: timeout,
                                reporter: reporter, loop: loop, limits: limits)
        step.begin()
        return step
    }

    func begin() {
        guard let target = URL(string: url), let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = target.host, !host.isEmpty else {
            end(.invalidURL(url: url))
            return
        }
        let file: PartialFile
        do {
            file = try PartialFile.create(beside: destination)
        } catch {
            end(error)
            return
        }
        let transfer = HTTPTransfer(url: target.absoluteString,
                                    options: .init(connectTimeout: limits.connectTimeout, stallTimeout: limits.stallTimeout),
                                    delegate: self)
        let started = state.withLock { state -> Bool in
            guard state.phase == .starting else { return false }
            state.phase = .transferring
            state.file = file
            state.hasher = sha256 == nil ? nil : SHA256()
            state.transfer = transfer
            restartConnectTimer(&state)
            if let timeout {
                state.overallTimer = loop.schedule(after: .milliseconds(Int64(timeout * 1000))) { [weak self] in self?.timeOut() }
            }
            return true
        }
        guard started else {
            // Stopped before it began: `end` has reported already.
            file.discard()
            return
        }
        transfer.start()
    }

    // MARK: - From the transfer's thread

    func transferReceivedHead(status: Int, contentLength: Int64?) -> Bool {
        enum Next { case nothing, progress(Int64?), fail(DownloadFailure) }
        let next = state.withLock { state -> Next in
            guard state.phase == .transferring else { return .nothing }
            state.hasResponse = true
            cancelConnectTimer(&state)
            guard (200..<300).contains(status) else { return .fail(.httpStatus(status, url: url)) }
            state.expected = contentLength
            if let maxBytes, let expected = state.expected, expected > Int64(maxBytes) {
                return .fail(.tooLarge(limit: maxBytes, url: url, declared: expected))
            }
            state.lastProgress = clock.now
            return .progress(state.expected)
        }
        switch next {
        case .nothing: return false
        case .progress(let total): reporter.progress(0, total)
        case .fail(let failure): end(failure)
        }
        return isTransferring
    }

    /// A piece of the body: counted, checked against `max_bytes`, written and hashed.
    func transferReceived(_ bytes: UnsafeRawBufferPointer) -> Bool {
        enum Next { case nothing, stop, progress(Int64, Int64?), fail(DownloadFailure) }
        let next = state.withLock { state -> Next in
            guard state.phase == .transferring, let file = state.file else { return .stop }
            state.received += Int64(bytes.count)
            // Checked before writing: a body without Content-Length stops as soon as it passes the limit.
            if let maxBytes, state.received > Int64(maxBytes) {
                return .fail(.tooLarge(limit: maxBytes, url: url, declared: nil))
            }
            do throws(DownloadFailure) {
                try file.write(bytes)
            } catch {
                return .fail(error)
            }
            state.hasher?.update(bytes)
            let now = clock.now
            if let last = state.lastProgress, now - last < limits.progressInterval { return .nothing }
            state.lastProgress = now
            return .progress(state.received, state.expected)
        }
        switch next {
        case .nothing: return true
        case .stop: return false
        case .progress(let bytes, let total): reporter.progress(bytes, total)
        case .fail(let failure): end(failure)
        }
        return isTransferring
    }

    /// Answers a redirect: followed at most `maximumRedirects` times, and never to another scheme.
    func transferRedirected(from origin: String, to target: String) -> Bool {
        let refusal = state.withLock { state -> DownloadFailure? in
            guard state.phase == .transferring else { return nil }
            state.redirects += 1
            if state.redirects > limits.maximumRedirects {
                return .tooManyRedirects(limit: limits.maximumRedirects, url: url)
            }
            if Self.scheme(of: target) != Self.scheme(of: origin) {
                return .schemeChangingRedirect(from: origin, to: target)
            }
            restartConnectTimer(&state)
            return nil
        }
        if let refusal { end(refusal) }
        return isTransferring
    }

    /// The end of the transfer: checked, then committed or discarded.
    func transferEnded(_ error: HTTPTransfer.Failure?) {
        enum Next { case nothing, fail(DownloadFailure), commit(PartialFile, received: Int64) }
        let next = state.withLock { state -> Next in
            guard state.phase == .transferring else { return .nothing }
            let isShort = state.expected.map { state.received < $0 } ?? false
            if let error {
                let failure = failure(for: error, hasResponse: state.hasResponse)
                // libcurl's "partial file" says less than the count does.
                guard isShort, let expected = state.expected else { return .fail(failure) }
                return .fail(.truncated(received: state.received, expected: expected, url: url))
            }
            if isShort, let expected = state.expected {
                return .fail(.truncated(received: state.received, expected: expected, url: url))
            }
            if let sha256, let actual = state.hasher.take()?.finalizeHex(), actual != sha256 {
                return .fail(.checksumMismatch(expected: sha256, actual: actual, url: url))
            }
            guard let file = state.file else { return .nothing }
            state.phase = .committing
            state.file = nil
            cancelTimers(&state)
            return .commit(file, received: state.received)
        }
        switch next {
        case .nothing:
            break
        case .fail(let failure):
            end(failure)
        case .commit(let file, let received):
            let result: TaskResult
            do {
                try file.commit()
                reporter.progress(received, received)
                result = .succeeded
            } catch {
                _ = unlink(destination)
                result = .failed(exitCode: nil, reason: error.description)
            }
            state.withLock { state in
                state.phase = .ended
                state.transfer = nil
            }
            reporter.finished(result)
        }
    }

    private var isTransferring: Bool { state.withLock { $0.phase == .transferring } }

    private static func scheme(of url: String) -> String? {
        url.firstIndex(of: ":").map { url[..<$0].lowercased() }
    }

    // MARK: - Timers

    private func restartConnectTimer(_ state: inout State) {
        cancelConnectTimer(&state)
        state.connectGeneration += 1
        let generation = state.connectGeneration
        state.connectTimer = loop.schedule(after: .milliseconds(Int64(limits.connectTimeout * 1000))) { [weak self] in
            self?.connectTimedOut(generation)
        }
    }

    private func cancelConnectTimer(_ state: inout State) {
        if let timer = state.connectTimer { loop.cancel(timer) }
        state.connectTimer = nil
    }

    private func cancelTimers(_ state: inout State) {
        cancelConnectTimer(&state)
        if let timer = state.overallTimer { loop.cancel(timer) }
        state.overallTimer = nil
    }

    private func connectTimedOut(_ generation: Int) {
        let isCurrent = state.withLock { state in
            state.phase == .transferring && !state.hasResponse && state.connectGeneration == generation
        }
        if isCurrent { end(.connectTimeout(seconds: limits.connectTimeout, url: url)) }
    }

    private func timeOut() {
        let (received, expected) = state.withLock { ($0.received, $0.expected) }
        end(.timedOut(seconds: timeout ?? 0, url: url, received: received, expected: expected))
    }

    // MARK: - Ending

    /// Ends a transfer that has not reached its commit: stops it, removes the temporary file and
    /// whatever is at the destination, and reports the failure. Only the first call does anything.
    private func end(_ failure: DownloadFailure) {
        let taken = state.withLock { state -> (PartialFile?, HTTPTransfer?)? in
            guard state.phase == .starting || state.phase == .transferring else { return nil }
            // From here on no callback writes, and the transfer's thread stops at its next callback.
            state.phase = .ended
            cancelTimers(&state)
            defer {
                state.file = nil
                state.transfer = nil
                state.hasher = nil
            }
            return (state.file, state.transfer)
        }
        guard let (file, transfer) = taken else { return }
        transfer?.cancel()
        file?.discard()
        _ = unlink(destination)   // a file from an earlier run must not pass for this download's result
        reporter.finished(.failed(exitCode: nil, reason: failure.description))
    }

    /// libcurl's error, in the user's terms.
    private func failure(for error: HTTPTransfer.Failure, hasResponse: Bool) -> DownloadFailure {
        switch error.code {
        case JOBGRAPH_CURLE_COULDNT_CONNECT?:
            return .connectionRefused(url: url)
        case JOBGRAPH_CURLE_COULDNT_RESOLVE_HOST?:
            return .unknownHost(URL(string: url)?.host ?? url, url: url)
        case JOBGRAPH_CURLE_OPERATION_TIMEDOUT?:
            return hasResponse ? .stalled(seconds: limits.stallTimeout, url: url)
                : .connectTimeout(seconds: limits.connectTimeout, url: url)
        case JOBGRAPH_CURLE_ABORTED_BY_CALLBACK?, JOBGRAPH_CURLE_WRITE_ERROR?:
            return .cancelled(url: url)  // only after `end`, which has reported already
        case JOBGRAPH_CURLE_PEER_FAILED_VERIFICATION?:
            // "SSL certificate problem: self-signed certificate", or for a certificate of another host
            // "SSL: no alternative certificate subject name matches target host name …".
            for prefix in ["SSL certificate problem: ", "SSL: "] where error.message.hasPrefix(prefix) {
                return .untrustedCertificate(detail: String(error.message.dropFirst(prefix.count)), url: url)
            }
            return .untrustedCertificate(detail: error.message, url: url)
        default:
            return .network(error.message, url: url)
        }
    }

    // MARK: - TaskExecution

    func terminate(grace: Double) {
        end(.cancelled(url: url))
    }

    func kill() {
        end(.cancelled(url: url))
    }

    /// Nothing to do: a download is no process; on Ctrl-Z it stops with jobgraph itself.
    func pause() {}

    func resume() {}
}
