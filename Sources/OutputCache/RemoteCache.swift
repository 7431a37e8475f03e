import Dispatch
import JobGraphBasics
import PipelineModel
import Steps

/// A shared output cache over Bazel's HTTP cache protocol (docs/cache.md, "A remote cache"): action
/// records at `URL/ac/KEY`, blobs at `URL/cas/SHA256`, with GET, HEAD and PUT. nginx or Apache with
/// WebDAV and bazel-remote serve it.
///
/// A server that cannot be reached, times out or refuses the credentials is a miss, with one warning,
/// and is not asked again in the run. Safe from any thread; blocking: only on workers.
final class RemoteCache: Sendable {
    let spec: RemoteCacheSpec
    /// The headers of every request, their values from the environment: never shown anywhere.
    private let headers: [(name: String, value: String)]
    private let warnings: Warnings
    /// Set once the server failed in a way that would fail every request.
    private let isOff = Locked(false)
    private let transfers = DispatchQueue(label: "jobgraph remote cache", attributes: .concurrent)
    /// Blobs uploaded at once per stored task.
    static let lanes = 4
    static let connectTimeout = 3.0
    static let timeout = 60.0

    init(spec: RemoteCacheSpec, environment: [String: String], warnings: Warnings) {
        self.spec = spec
        self.warnings = warnings
        var headers: [(name: String, value: String)] = []
        for (header, variable) in spec.headerVariables {
            if let value = environment[variable], !value.isEmpty {
                headers.append((header, value))
            } else {
                warnings.note("remote cache: the environment variable '\(variable)' for header '\(header)' is not set; it is not sent")
            }
        }
        self.headers = headers
    }

    /// The record under `key`; `nil` when the server has none, or cannot be asked.
    func record(_ key: String) -> ActionRecord? {
        guard let response = send(.get, "ac/" + key) else { return nil }
        guard response.status == 200 else { return nil }
        guard let record = ActionRecord.decoded(response.body) else {
            warnings.note("remote cache: the entry for key \(key.prefix(12))… is not a jobgraph action record; not restored")
            return nil
        }
        return record
    }

    /// The blob's bytes, checked against its SHA-256; `nil` when missing, unreadable or corrupt.
    func blob(_ sha256: String) -> [UInt8]? {
        guard let response = send(.get, "cas/" + sha256), response.status == 200 else { return nil }
        var hasher = SHA256()
        hasher.update(response.body)
        guard hasher.finalizeHex() == sha256 else {
            warnings.note(CacheError.corruptBlob(sha256, origin: "remote").description)
            return nil
        }
        return response.body
    }

    /// Uploads a stored task's blobs the server lacks, several at once, then its record: on threads of
    /// its own, calling `done` at the end whatever happened.
    func upload(_ record: ActionRecord, key: String, from local: LocalCacheStore, done: @escaping @Sendable () -> Void) {
        let blobs = Array(Set(record.blobs.map(\.sha256)))
        let group = DispatchGroup()
        let failed = Locked(false)
        for lane in 0..<min(Self.lanes, blobs.count) {
            group.enter()
            transfers.async { [self] in
                defer { group.leave() }
                for index in stride(from: lane, to: blobs.count, by: Self.lanes) {
                    guard !isOff.withLock({ $0 }) else { return }
                    let sha256 = blobs[index]
                    if send(.head, "cas/" + sha256)?.status == 200 { continue }
                    guard let bytes = try? local.blob(sha256), put("cas/" + sha256, bytes) else {  // a local blob gone bad is not sent
                        failed.withLock { $0 = true }
                        return
                    }
                }
            }
        }
        group.notify(queue: transfers) { [self] in
            // The record only once every blob it names is there: a reader never finds one it cannot restore.
            if !failed.withLock({ $0 }) && !isOff.withLock({ $0 }) { _ = put("ac/" + key, record.encoded()) }
            done()
        }
    }

    private func put(_ path: String, _ bytes: [UInt8]) -> Bool {
        guard let response = send(.put, path, body: bytes) else { return false }
        guard (200..<300).contains(response.status) else {
            warnings.note("remote cache \(spec.url) refused an upload (HTTP \(response.status)); nothing more is uploaded in this run")
            isOff.withLock { $0 = true }
            return false
        }
        return true
    }

    /// One request; `nil` when the server is off for this run, or now turns out to be (with the warning).
    private func send(_ method: HTTPRequest.Method, _ path: String, body: [UInt8] = []) -> HTTPRequest.Response? {
        guard !isOff.withLock({ $0 }) else { return nil }
        let request = HTTPRequest(method, url: spec.url + "/" + path, headers: headers, body: body,
                                  connectTimeout: Self.connectTimeout, timeout: Self.timeout)
        switch request.send() {
        case .failure(let failure):
            turnOff("cannot reach remote cache \(spec.url): \(failure.message); going on without it")
            return nil
        case .success(let response) where response.status == 401 || response.status == 403:
            turnOff("remote cache \(spec.url) refused the credentials (HTTP \(response.status)); going on without it")
            return nil
        case .success(let response) where response.status >= 500:
            turnOff("remote cache \(spec.url) failed (HTTP \(response.status)); going on without it")
            return nil
        case .success(let response):
            return response
        }
    }

    private func turnOff(_ warning: String) {
        if isOff.withLock({ old in defer { old = true }; return !old }) { warnings.note(warning) }
    }
}
