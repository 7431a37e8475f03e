import JobGraphBasics
/// Why a `download` attempt failed; each case words one reason for the user, naming the URL.
enum DownloadFailure: Error, Equatable, CustomStringConvertible {
    case invalidURL(url: String)
    case httpStatus(Int, url: String)
    case connectionRefused(url: String)
    case unknownHost(String, url: String)
    /// No response head within `seconds` of starting (or of following a redirect).
    case connectTimeout(seconds: Double, url: String)
    /// The task's `timeout` passed.
    case timedOut(seconds: Double, url: String, received: Int64, expected: Int64?)
    /// Nothing arrived for `seconds` in the middle of the body.
    case stalled(seconds: Double, url: String)
    case tooManyRedirects(limit: Int, url: String)
    case schemeChangingRedirect(from: String, to: String)
    /// `declared` is the Content-Length when that alone gave the size away.
    case tooLarge(limit: Int, url: String, declared: Int64?)
    case truncated(received: Int64, expected: Int64, url: String)
    case checksumMismatch(expected: String, actual: String, url: String)
    /// The server's TLS certificate did not verify against the trusted certificates; `detail` is the
    /// TLS library's reason (self-signed, expired, wrong host …).
    case untrustedCertificate(detail: String, url: String)
    case network(String, url: String)
    case file(String)
    case cancelled(url: String)

    var description: String {
        switch self {
        case .invalidURL(let url):
            "'\(url)' is not an http or https URL"
        case .httpStatus(let status, let url):
            "HTTP \(status) \(HTTPStatusText.phrase(for: status)) from '\(url)'"
        case .connectionRefused(let url):
            "connection refused by '\(url)'"
        case .unknownHost(let host, let url):
            "unknown host '\(host)' in '\(url)'"
        case .connectTimeout(let seconds, let url):
            "no answer from '\(url)' within \(DurationText.text(forSeconds: seconds)) (connect timeout)"
        case .timedOut(let seconds, let url, let received, let expected):
            "timed out after \(DurationText.text(forSeconds: seconds)) downloading '\(url)' (\(received)\(expected.map { " of \($0)" } ?? "") bytes received)"
        case .stalled(let seconds, let url):
            "no data from '\(url)' for \(DurationText.text(forSeconds: seconds))"
        case .tooManyRedirects(let limit, let url):
            "too many redirects (more than \(limit)) from '\(url)'"
        case .schemeChangingRedirect(let from, let to):
            "refused a redirect to another scheme: '\(from)' -> '\(to)'"
        case .tooLarge(let limit, let url, let declared?):
            "'\(url)' is larger than max_bytes (\(limit) bytes): its Content-Length is \(declared)"
        case .tooLarge(let limit, let url, nil):
            "'\(url)' sent more than max_bytes (\(limit) bytes)"
        case .truncated(let received, let expected, let url):
            "the server closed the connection after \(received) of \(expected) bytes of '\(url)'"
        case .checksumMismatch(let expected, let actual, let url):
            "checksum mismatch for '\(url)': expected sha256 \(expected), got \(actual)"
        case .untrustedCertificate(let detail, let url):
            "certificate not trusted for '\(url)': \(detail) (jobgraph trusts the system's CA certificates, "
                + "/etc/ssl/certs; add a private CA there with update-ca-certificates)"
        case .network(let message, let url):
            "cannot download '\(url)': \(message)"
        case .file(let message):
            message
        case .cancelled(let url):
            "cancelled while downloading '\(url)'"
        }
    }
}
