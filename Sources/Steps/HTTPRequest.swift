import CCurl

/// One HTTP request made and answered on the caller's thread, its body in memory: what the output cache
/// speaks to a remote cache with (Bazel's HTTP cache protocol, docs/cache.md). Downloads of files use
/// `HTTPTransfer`, which streams.
///
/// Blocking: call from a worker, never from the event loop's thread.
public struct HTTPRequest: Sendable {
    public enum Method: String, Sendable {
        case get = "GET"
        case put = "PUT"
        case head = "HEAD"
    }

    public var method: Method
    /// An http or https URL.
    public var url: String
    public var headers: [(name: String, value: String)]
    /// The body of a PUT.
    public var body: [UInt8]
    /// Seconds to establish the connection.
    public var connectTimeout: Double
    /// Seconds the whole request may take, from its start to its answer's last byte.
    public var timeout: Double

    public init(_ method: Method, url: String, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
                connectTimeout: Double = 5, timeout: Double = 60) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.connectTimeout = connectTimeout
        self.timeout = timeout
    }

    /// The answer: any HTTP status (a 404 is an answer), with its body.
    public struct Response: Sendable {
        public var status: Int
        public var body: [UInt8]
    }

    /// No answer: libcurl could not be loaded, the server could not be reached, or the time ran out.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var message: String
        public var description: String { message }
    }

    /// Sends the request and waits for the whole answer.
    public func send() -> Result<Response, Failure> {
        if let problem = jobgraph_curl_load() { return .failure(Failure(message: String(cString: problem))) }
        guard let handle = jobgraph_curl_easy_init() else {
            return .failure(Failure(message: "libcurl could not start a transfer (curl_easy_init)"))
        }
        defer { jobgraph_curl_easy_cleanup(handle) }
        // Libcurl keeps the list's pointers for the transfer; freed after it.
        var list: UnsafeMutableRawPointer?
        // PUT's body goes as `POSTFIELDS` under a custom method: libcurl would otherwise label it a form and
        // wait for a `100 Continue` before large ones.
        for header in headers.map({ "\($0.name): \($0.value)" }) + ["Content-Type: application/octet-stream", "Expect:"] {
            list = jobgraph_curl_slist_append(list, header) ?? list
        }
        defer { if let list { jobgraph_curl_slist_free_all(list) } }
        let sink = ResponseSink()
        var errorText = [CChar](repeating: 0, count: Int(JOBGRAPH_CURL_ERROR_SIZE))
        let code = withExtendedLifetime(sink) {
            body.withUnsafeBytes { body in
                errorText.withUnsafeMutableBufferPointer { errorBuffer in
                    _ = jobgraph_curl_setopt_long(handle, JOBGRAPH_CURLOPT_NOSIGNAL, 1)  // no SIGALRM: jobgraph has threads
                    _ = jobgraph_curl_setopt_pointer(handle, JOBGRAPH_CURLOPT_PROTOCOLS_STR, "http,https")
                    _ = jobgraph_curl_setopt_pointer(handle, JOBGRAPH_CURLOPT_USERAGENT, "jobgraph")
                    _ = jobgraph_curl_setopt_pointer(handle, JOBGRAPH_CURLOPT_URL, url)
                    _ = jobgraph_curl_setopt_pointer(handle, JOBGRAPH_CURLOPT_ERRORBUFFER, errorBuffer.baseAddress)
                    _ = jobgraph_curl_setopt_long(handle, JOBGRAPH_CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(connectTimeout * 1000)))
                    _ = jobgraph_curl_setopt_long(handle, JOBGRAPH_CURLOPT_TIMEOUT_MS, max(1, Int(timeout * 1000)))
                    _ = jobgraph_curl_setopt_pointer(handle, JOBGRAPH_CURLOPT_HTTPHEADER, list)
                    switch method {
                    case .get: break
                    case .head: _ = jobgraph_curl_setopt_long(handle, JOBGRAPH_CURLOPT_NOBODY, 1)
                    case .put:
                        _ = jobgraph_curl_setopt_pointer(handle, JOBGRAPH_CURLOPT_CUSTOMREQUEST, "PUT")
                        _ = jobgraph_curl_setopt_int64(handle, JOBGRAPH_CURLOPT_POSTFIELDSIZE_LARGE, Int64(body.count))
                        // An empty body still needs a pointer, or libcurl reads the fields as a C string.
                        _ = jobgraph_curl_setopt_pointer(handle, JOBGRAPH_CURLOPT_POSTFIELDS, body.baseAddress ?? UnsafeRawPointer(bitPattern: 1))
                    }
                    _ = jobgraph_curl_setopt_pointer(handle, JOBGRAPH_CURLOPT_WRITEDATA, Unmanaged.passUnretained(sink).toOpaque())
                    _ = jobgraph_curl_setopt_write_function(handle) { bytes, size, count, context in
                        let sink = Unmanaged<ResponseSink>.fromOpaque(context!).takeUnretainedValue()
                        sink.bytes.append(contentsOf: UnsafeRawBufferPointer(start: bytes, count: size * count))
                        return size * count
                    }
                    let code = jobgraph_curl_perform(handle)
                    if code != JOBGRAPH_CURLE_OK, let base = errorBuffer.baseAddress, base[0] != 0 { sink.error = String(cString: base) }
                    return code
                }
            }
        }
        guard code == JOBGRAPH_CURLE_OK else {
            return .failure(Failure(message: sink.error ?? String(cString: jobgraph_curl_strerror(code))))
        }
        var status = 0
        _ = jobgraph_curl_getinfo_long(handle, JOBGRAPH_CURLINFO_RESPONSE_CODE, &status)
        return .success(Response(status: status, body: sink.bytes))
    }
}

/// Where libcurl's callback puts a response's body; used on the request's thread only.
private final class ResponseSink {
    var bytes: [UInt8] = []
    var error: String?
}
