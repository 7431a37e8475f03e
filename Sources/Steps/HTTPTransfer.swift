import CCurl
import Foundation
import Synchronization

/// What an `HTTPTransfer` tells its owner, on the transfer's own thread, in this order: at most one
/// `head` per hop, bodies after the final head, `redirect` between hops, and one `ended` last.
protocol HTTPTransferDelegate: AnyObject, Sendable {
    /// The head of a response that is not a redirect. `false` stops the transfer.
    func transferReceivedHead(status: Int, contentLength: Int64?) -> Bool
    /// A piece of the body. `false` stops the transfer.
    func transferReceived(_ bytes: UnsafeRawBufferPointer) -> Bool
    /// A redirect from `origin` to `target`, an absolute URL: `true` follows it.
    func transferRedirected(from origin: String, to target: String) -> Bool
    /// The end: `nil` when the last response arrived whole, else libcurl's error.
    func transferEnded(_ failure: HTTPTransfer.Failure?)
}

/// One HTTP or HTTPS GET through libcurl's easy interface, on a thread of its own, following redirects
/// only when its delegate agrees.
///
/// Why libcurl directly and not URLSession (which is libcurl underneath on Linux): linking
/// FoundationNetworking loaded libcurl and some 30 libraries it needs into every jobgraph command,
/// 6 ms of a 13 ms start (`perf stat` of `jobgraph --version`); through `CCurl` they load when the
/// first download starts. A blocking `curl_easy_perform` on its own thread also gives back-pressure
/// (the body is written as it is read) and a cancel that is a flag the callbacks read.
final class HTTPTransfer: Sendable {
    struct Failure: Error, Equatable {
        /// libcurl's error code; `nil` when libcurl could not be loaded.
        var code: jobgraph_curl_code?
        /// libcurl's message about this transfer, or why libcurl could not be loaded.
        var message: String
    }

    struct Options: Sendable {
        /// Seconds to establish the connection (TCP and TLS).
        var connectTimeout: Double
        /// Seconds without any data before the transfer is abandoned (whole seconds: libcurl's unit).
        var stallTimeout: Double
    }

    private let url: String
    private let options: Options
    fileprivate let delegate: any HTTPTransferDelegate
    private let cancelled = Atomic<Bool>(false)

    init(url: String, options: Options, delegate: any HTTPTransferDelegate) {
        self.url = url
        self.options = options
        self.delegate = delegate
    }

    /// Starts the transfer on a new thread and returns.
    func start() {
        let thread = Thread { [self] in perform() }
        thread.name = "jobgraph-download"
        thread.start()
    }

    /// Stops the transfer at libcurl's next callback (within about a second when no data flows); the
    /// delegate hears nothing more but `ended`.
    func cancel() {
        cancelled.store(true, ordering: .relaxed)
    }

    fileprivate var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    private func perform() {
        if let problem = jobgraph_curl_load() {
            delegate.transferEnded(Failure(code: nil, message: String(cString: problem)))
            return
        }
        guard let handle = jobgraph_curl_easy_init() else {
            delegate.transferEnded(Failure(code: nil, message: "libcurl could not start a transfer (curl_easy_init)"))
            return
        }
        defer { jobgraph_curl_easy_cleanup(handle) }
        let hop = TransferHop(transfer: self, handle: handle)
        var errorText = [CChar](repeating: 0, count: Int(JOBGRAPH_CURL_ERROR_SIZE))
        withExtendedLifetime(hop) {
            errorText.withUnsafeMutableBufferPointer { errorBuffer in
                configure(handle, context: Unmanaged.passUnretained(hop).toOpaque(), errorBuffer: errorBuffer.baseAddress)
                var current = url
                while true {
                    errorBuffer[0] = 0
                    hop.isRedirect = false
                    hop.hasLocation = false
                    _ = jobgraph_curl_setopt_pointer(handle, JOBGRAPH_CURLOPT_URL, current)
                    let code = jobgraph_curl_perform(handle)
                    if code != JOBGRAPH_CURLE_OK {
                        let text = errorBuffer.baseAddress.map { String(cString: $0) } ?? ""
                        delegate.transferEnded(Failure(code: code, message: text.isEmpty ? String(cString: jobgraph_curl_strerror(code)) : text))
                        return
                    }
                    guard hop.isRedirect, let target = jobgraph_curl_getinfo_string(handle, JOBGRAPH_CURLINFO_REDIRECT_URL) else {
                        delegate.transferEnded(nil)
                        return
                    }
                    let next = String(cString: target)
                    guard !isCancelled, delegate.transferRedirected(from: current, to: next) else {
                        delegate.transferEnded(Failure(code: JOBGRAPH_CURLE_ABORTED_BY_CALLBACK, message: "redirect not followed"))
                        return
                    }
                    current = next
                }
            }
        }
    }

    private func configure(_ handle: UnsafeMutableRawPointer, context: UnsafeMutableRawPointer, errorBuffer: UnsafeMutablePointer<CChar>?) {
        _ = jobgraph_curl_setopt_long(handle, JOBGRAPH_CURLOPT_NOSIGNAL, 1)  // no SIGALRM for name lookups: jobgraph has threads
        _ = jobgraph_curl_setopt_pointer(handle, JOBGRAPH_CURLOPT_PROTOCOLS_STR, "http,https")
        _ = jobgraph_curl_setopt_long(handle, JOBGRAPH_CURLOPT_FOLLOWLOCATION, 0)  // each redirect is the delegate's to allow
        _ = jobgraph_curl_setopt_pointer(handle, JOBGRAPH_CURLOPT_USERAGENT, "jobgraph")
        // No Accept-Encoding (libcurl sends none unless told): the bytes as served, so that the size, the
        // Content-Length check and the checksum are all of the file itself.
        _ = jobgraph_curl_setopt_long(handle, JOBGRAPH_CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(options.connectTimeout * 1000)))
        _ = jobgraph_curl_setopt_long(handle, JOBGRAPH_CURLOPT_LOW_SPEED_LIMIT, 1)
        _ = jobgraph_curl_setopt_long(handle, JOBGRAPH_CURLOPT_LOW_SPEED_TIME, max(1, Int(options.stallTimeout.rounded(.up))))
        _ = jobgraph_curl_setopt_pointer(handle, JOBGRAPH_CURLOPT_ERRORBUFFER, errorBuffer)
        _ = jobgraph_curl_setopt_pointer(handle, JOBGRAPH_CURLOPT_HEADERDATA, context)
        _ = jobgraph_curl_setopt_header_function(handle) { bytes, size, count, context in
            TransferHop.from(context).header(UnsafeRawBufferPointer(start: bytes, count: size * count))
        }
        _ = jobgraph_curl_setopt_pointer(handle, JOBGRAPH_CURLOPT_WRITEDATA, context)
        _ = jobgraph_curl_setopt_write_function(handle) { bytes, size, count, context in
            TransferHop.from(context).body(UnsafeRawBufferPointer(start: bytes, count: size * count))
        }
        _ = jobgraph_curl_setopt_long(handle, JOBGRAPH_CURLOPT_NOPROGRESS, 0)
        _ = jobgraph_curl_setopt_pointer(handle, JOBGRAPH_CURLOPT_XFERINFODATA, context)
        _ = jobgraph_curl_setopt_progress_function(handle) { context, _, _, _, _ in
            TransferHop.from(context).transfer.isCancelled ? 1 : 0
        }
    }
}

/// A transfer's state on its own thread, where libcurl calls back: the easy handle, and whether the
/// response being read is a redirect, whose body is not the file.
private final class TransferHop {
    let transfer: HTTPTransfer
    let handle: UnsafeMutableRawPointer
    var isRedirect = false
    var hasLocation = false

    init(transfer: HTTPTransfer, handle: UnsafeMutableRawPointer) {
        self.transfer = transfer
        self.handle = handle
    }

    static func from(_ context: UnsafeMutableRawPointer?) -> TransferHop {
        Unmanaged<TransferHop>.fromOpaque(context!).takeUnretainedValue()
    }

    /// One header line of any response (redirects and `100 Continue` included); the empty line ends a head.
    /// Returning anything but the line's length stops the transfer.
    func header(_ line: UnsafeRawBufferPointer) -> Int {
        guard !transfer.isCancelled else { return 0 }
        if line.starts(with: "HTTP/".utf8) {
            isRedirect = false
            hasLocation = false
        } else if line.count >= 9, line.prefix(9).map({ $0 | 0x20 }).elementsEqual("location:".utf8) {
            hasLocation = true
        } else if line.allSatisfy({ $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") }) {
            var status = 0
            _ = jobgraph_curl_getinfo_long(handle, JOBGRAPH_CURLINFO_RESPONSE_CODE, &status)
            if (100..<200).contains(status) { return line.count }  // an interim answer; the real head follows
            isRedirect = (300..<400).contains(status) && hasLocation
            if !isRedirect {
                var length: Int64 = -1
                _ = jobgraph_curl_getinfo_int64(handle, JOBGRAPH_CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
                guard transfer.delegate.transferReceivedHead(status: status, contentLength: length >= 0 ? length : nil) else { return 0 }
            }
        }
        return line.count
    }

    /// A piece of a body; returning anything but its length stops the transfer.
    func body(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard !transfer.isCancelled else { return 0 }
        if isRedirect { return bytes.count }  // a redirect's own page
        return transfer.delegate.transferReceived(bytes) ? bytes.count : 0
    }
}
