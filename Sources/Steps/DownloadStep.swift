import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
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
/// The HTTP client is `URLSession` from FoundationNetworking (libcurl underneath), chosen over
/// AsyncHTTPClient 1.37.0 after measuring both against `curl` on loopback (release builds, median of 3,
/// the 2-core machine nearly idle, Python's `http.server`, one connection per request):
///
/// | | curl | URLSession | AsyncHTTPClient |
/// | --- | --- | --- | --- |
/// | one 200 MB file | 0.30 s | 0.63 s | 0.34 s |
/// | CPU time for it (user + sys) | 0.30 s | 0.90 s | 0.28 s |
/// | peak memory for it | 11 MB | 42-73 MB | 20 MB |
/// | 500 files of 10 KB, 4 at a time | 3.27 s (`xargs -P 4`), 0.47 s (`--parallel`) | 0.83 s (a session each) | 0.56 s |
/// | clean debug build of the client | - | none: in the toolchain | 290 s (720 s on a busy machine) |
///
/// AsyncHTTPClient is about twice as fast on a large file, but only above some 300 MB/s does that show,
/// far beyond the networks pipelines download over, while its build (SwiftNIO, BoringSSL) would add
/// five to twelve minutes to every CI run, twice (the ThreadSanitizer pass builds again). URLSession
/// streams through its delegate's `didReceive data`, lets each transfer decide every redirect
/// (`willPerformHTTPRedirection`), and tells refused connections, unknown hosts and timeouts apart.
///
/// Its limits, and what this step does about them: it has no separate connect timeout, so the 10 s here
/// runs until the response head arrives; it has no back-pressure, so pieces wait in memory when the disk
/// is slower than the network; its cancel is processed after the reads already queued, so past
/// `max_bytes` or after `terminate` some more data may arrive (ignored: nothing more is written, and
/// the failure is reported at once); and swift-corelibs-foundation traps on a redirect answer given
/// after a cancel, which is why `redirect` answers under the state lock and only while the step has not
/// ended, which `end` marks under that lock before it cancels.
///
/// `@unchecked Sendable`: the mutable state lives in `state`, a `Locked` box; the rest is immutable.
final class DownloadStep: TaskExecution, @unchecked Sendable {
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
        var session: URLSession?
        var task: URLSessionDataTask?
        var currentURL: URL?
        var hasResponse = false
        var received: Int64 = 0
        var expected: Int64?
        var redirects = 0
        /// A refused redirect: reported once URLSession has taken the refusal (see `redirect`).
        var refusedRedirect: DownloadFailure?
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
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        // URLSession's request timeout restarts with every piece received, so it is the stall limit.
        configuration.timeoutIntervalForRequest = limits.stallTimeout
        var request = URLRequest(url: target)
        // The bytes as served: without this, libcurl would ask for gzip and unpack it, and the size,
        // Content-Length check and checksum would all be of something else than the file.
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        let session = URLSession(configuration: configuration, delegate: DownloadSessionDelegate(step: self), delegateQueue: nil)
        let task = session.dataTask(with: request)
        let started = state.withLock { state -> Bool in
            guard state.phase == .starting else { return false }
            state.phase = .transferring
            state.file = file
            state.hasher = sha256 == nil ? nil : SHA256()
            state.session = session
            state.task = task
            state.currentURL = target
            restartConnectTimer(&state)
            if let timeout {
                state.overallTimer = loop.schedule(after: .milliseconds(Int64(timeout * 1000))) { [weak self] in self?.timeOut() }
            }
            return true
        }
        guard started else {
            // Stopped before it began: `end` has reported already.
            session.invalidateAndCancel()
            file.discard()
            return
        }
        task.resume()
    }

    // MARK: - From the session's delegate queue

    /// The response head of the last hop (redirects are not reported here).
    func received(_ response: URLResponse) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let length = response.expectedContentLength
        enum Next { case nothing, progress(Int64?), fail(DownloadFailure) }
        let next = state.withLock { state -> Next in
            guard state.phase == .transferring else { return .nothing }
            if let refused = state.refusedRedirect { return .fail(refused) }
            state.hasResponse = true
            cancelConnectTimer(&state)
            guard (200..<300).contains(status) else { return .fail(.httpStatus(status, url: url)) }
            state.expected = length >= 0 ? length : nil
            if let maxBytes, let expected = state.expected, expected > Int64(maxBytes) {
                return .fail(.tooLarge(limit: maxBytes, url: url, declared: expected))
            }
            state.lastProgress = clock.now
            return .progress(state.expected)
        }
        switch next {
        case .nothing: break
        case .progress(let total): reporter.progress(0, total)
        case .fail(let failure): end(failure)
        }
    }

    /// A piece of the body: counted, checked against `max_bytes`, written and hashed.
    func received(_ data: Data) {
        enum Next { case nothing, progress(Int64, Int64?), fail(DownloadFailure) }
        let next = state.withLock { state -> Next in
            guard state.phase == .transferring, let file = state.file else { return .nothing }
            if let refused = state.refusedRedirect { return .fail(refused) }
            state.received += Int64(data.count)
            // Checked before writing: a body without Content-Length stops as soon as it passes the limit.
            if let maxBytes, state.received > Int64(maxBytes) {
                return .fail(.tooLarge(limit: maxBytes, url: url, declared: nil))
            }
            let writeFailure = data.withUnsafeBytes { bytes -> DownloadFailure? in
                do throws(DownloadFailure) {
                    try file.write(bytes)
                } catch {
                    return error
                }
                state.hasher?.update(bytes)
                return nil
            }
            if let writeFailure { return .fail(writeFailure) }
            let now = clock.now
            if let last = state.lastProgress, now - last < limits.progressInterval { return .nothing }
            state.lastProgress = now
            return .progress(state.received, state.expected)
        }
        switch next {
        case .nothing: break
        case .progress(let bytes, let total): reporter.progress(bytes, total)
        case .fail(let failure): end(failure)
        }
    }

    /// Answers a redirect: followed at most `maximumRedirects` times, and never to another scheme.
    ///
    /// The answer goes to URLSession under the state lock, and not at all once `end` has marked the step
    /// ended (under the same lock, before it cancels): swift-corelibs-foundation traps on an answer that
    /// reaches it after a cancel. So the answer, which URLSession queues at once, is always queued before
    /// the cancel. A refusal ends the step at the next callback, about the redirect response itself.
    func redirect(from response: HTTPURLResponse, to request: URLRequest, answer: @Sendable (URLRequest?) -> Void) {
        state.withLock { state in
            guard state.phase == .transferring else { return }
            guard state.refusedRedirect == nil else {
                answer(nil)
                return
            }
            state.redirects += 1
            let origin = response.url ?? state.currentURL
            if state.redirects > limits.maximumRedirects {
                state.refusedRedirect = .tooManyRedirects(limit: limits.maximumRedirects, url: url)
            } else if request.url?.scheme?.lowercased() != origin?.scheme?.lowercased() {
                state.refusedRedirect = .schemeChangingRedirect(from: origin?.absoluteString ?? url,
                                                                to: request.url?.absoluteString ?? "")
            }
            guard state.refusedRedirect == nil, let next = request.url else {
                answer(nil)
                return
            }
            state.currentURL = next
            restartConnectTimer(&state)
            answer(request)
        }
    }

    /// The end of the transfer: checked, then committed or discarded.
    func completed(_ error: (any Error)?) {
        enum Next { case nothing, fail(DownloadFailure), commit(PartialFile, received: Int64, URLSession?) }
        let next = state.withLock { state -> Next in
            guard state.phase == .transferring else { return .nothing }
            if let refused = state.refusedRedirect { return .fail(refused) }
            let isShort = state.expected.map { state.received < $0 } ?? false
            if let error {
                let failure = failure(for: error, hasResponse: state.hasResponse)
                // libcurl's "partial file" (an unknown error to URLSession) says less than the count does.
                guard case .network = failure, isShort, let expected = state.expected else { return .fail(failure) }
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
            return .commit(file, received: state.received, state.session)
        }
        switch next {
        case .nothing:
            break
        case .fail(let failure):
            end(failure)
        case .commit(let file, let received, let session):
            session?.finishTasksAndInvalidate()
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
                state.session = nil
                state.task = nil
            }
            reporter.finished(result)
        }
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
        let taken = state.withLock { state -> (PartialFile?, URLSession?)? in
            guard state.phase == .starting || state.phase == .transferring else { return nil }
            // From here on no callback writes, and `redirect` no longer answers (see there).
            state.phase = .ended
            cancelTimers(&state)
            defer {
                state.file = nil
                state.session = nil
                state.task = nil
                state.hasher = nil
            }
            return (state.file, state.session)
        }
        guard let (file, session) = taken else { return }
        file?.discard()
        _ = unlink(destination)   // a file from an earlier run must not pass for this download's result
        reporter.finished(.failed(exitCode: nil, reason: failure.description))
        // URLSession's cancel waits (`sync`) for the session's work queue, which may be busy reading:
        // never on the event loop's thread or the caller's.
        if let session { DispatchQueue.global().async { session.invalidateAndCancel() } }
    }

    /// URLSession's error, in the user's terms.
    private func failure(for error: any Error, hasResponse: Bool) -> DownloadFailure {
        let error = error as NSError
        guard error.domain == NSURLErrorDomain else { return .network(error.localizedDescription, url: url) }
        switch error.code {
        case NSURLErrorCannotConnectToHost:
            return .connectionRefused(url: url)
        case NSURLErrorCannotFindHost:
            return .unknownHost(URL(string: url)?.host ?? url, url: url)
        case NSURLErrorTimedOut:
            return hasResponse ? .stalled(seconds: limits.stallTimeout, url: url)
                : .connectTimeout(seconds: limits.connectTimeout, url: url)
        case NSURLErrorHTTPTooManyRedirects:
            return .tooManyRedirects(limit: limits.maximumRedirects, url: url)
        case NSURLErrorCancelled:
            return .cancelled(url: url)
        case NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasUnknownRoot, NSURLErrorServerCertificateHasBadDate,
             NSURLErrorServerCertificateNotYetValid:
            return .untrustedCertificate(detail: error.localizedDescription, url: url)
        default:
            // corelibs Foundation reports libcurl's CURLE_PEER_FAILED_VERIFICATION as NSURLErrorUnknown with
            // curl's text: "SSL certificate problem: self-signed certificate", or for a certificate of
            // another host "SSL: no alternative certificate subject name matches target host name …".
            let text = error.localizedDescription
            if text.hasPrefix("SSL certificate problem: ") {
                return .untrustedCertificate(detail: String(text.dropFirst("SSL certificate problem: ".count)), url: url)
            }
            if text.hasPrefix("SSL: "), text.contains("certificate subject name") {
                return .untrustedCertificate(detail: String(text.dropFirst("SSL: ".count)), url: url)
            }
            return .network(text, url: url)
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
