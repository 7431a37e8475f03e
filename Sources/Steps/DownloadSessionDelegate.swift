import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Passes one transfer's URLSession callbacks on to its `DownloadStep`.
///
/// A separate object because URLSession wants an `NSObject`. Its session is the step's own, so the
/// callbacks of one download arrive in order on that session's serial delegate queue, and downloads
/// running side by side write and hash on different threads. The session holds this delegate (and so
/// the step) strongly until the step invalidates the session.
final class DownloadSessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let step: DownloadStep

    init(step: DownloadStep) {
        self.step = step
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        step.received(response)
        // swift-corelibs-foundation ignores the disposition; the step cancels the task itself when it must.
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        step.received(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        step.redirect(from: response, to: request, answer: completionHandler)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        step.completed(error)
    }
}
