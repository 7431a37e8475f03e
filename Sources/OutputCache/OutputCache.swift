import Dispatch
import Execution
import Foundation
import JobGraphBasics
import PipelineModel
import StateStore

/// Where a run's output cache is and what it may do: from `--cache-dir`, `cache_dir:`, `--remote-cache`,
/// `remote_cache:` and `--no-cache` (docs/cache.md).
public struct OutputCacheSettings: Sendable {
    /// The local cache's folder (absolute).
    public var directory: String
    public var remote: RemoteCacheSpec?

    public init(directory: String, remote: RemoteCacheSpec? = nil) {
        self.directory = directory
        self.remote = remote
    }

    /// The settings of a run: the command line's options over the file's keys over the defaults.
    /// - Parameters:
    ///   - directory: `--cache-dir`, relative to the current folder `workingDirectory` or absolute.
    ///   - remoteURL: `--remote-cache`; it keeps the file's `read_only` and `header_env`.
    /// - Returns: `nil` when there is nowhere to keep a local cache (no `HOME`, no `XDG_CACHE_HOME`).
    public static func resolved(pipeline: Pipeline, pipelineDirectory: String, directory: String?, remoteURL: String?,
                                workingDirectory: String, environment: [String: String]) -> OutputCacheSettings? {
        func absolute(_ path: String, in base: String) -> String { path.hasPrefix("/") ? path : base + "/" + path }
        let folder = directory.map { absolute($0, in: workingDirectory) }
            ?? pipeline.cacheDirectory.map { absolute($0, in: pipelineDirectory) }
            ?? LocalCacheStore.defaultDirectory(environment: environment)
        guard let folder else { return nil }
        var remote = pipeline.remoteCache
        if let remoteURL {
            let url = remoteURL.hasSuffix("/") ? String(remoteURL.dropLast()) : remoteURL
            remote = RemoteCacheSpec(url: url, isReadOnly: remote?.isReadOnly ?? false, headerVariables: remote?.headerVariables ?? [])
        }
        return OutputCacheSettings(directory: folder, remote: remote)
    }
}

/// A run's output cache: the local store, and the remote one when there is one. The Runner's `OutputCaching`.
///
/// Safe from any thread. Problems are warnings, told once per cause through `warn`.
public final class OutputCache: OutputCaching {
    public let local: LocalCacheStore
    let remote: RemoteCache?
    /// The caller's environment, for `cache_env`.
    private let environment: [String: String]
    private let run: Int64?
    private let host: String
    private let warnings: Warnings
    /// The stores and uploads going on, for `finish`.
    private let pending = DispatchGroup()

    /// - Parameters:
    ///   - environment: the caller's, for `cache_env` and the remote's headers.
    ///   - run: the history's number of this run, recorded with what it stores.
    ///   - warn: told each warning once, as it happens (lines without the `warning: ` prefix).
    public init(settings: OutputCacheSettings, environment: [String: String], run: Int64?, host: String = OutputCache.hostName(),
                warn: @escaping @Sendable (String) -> Void) {
        local = LocalCacheStore(directory: settings.directory)
        self.environment = environment
        self.run = run
        self.host = host
        let warnings = Warnings(warn)
        self.warnings = warnings
        remote = settings.remote.map { RemoteCache(spec: $0, environment: environment, warnings: warnings) }
    }

    /// This machine's name, for the records it stores.
    public static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "unknown" }
        return String(cString: buffer)
    }

    public func key(for spec: TaskSpec, answer: UpToDateAnswer, needKeys: [String?]) -> String? {
        guard let fingerprints = RunRecorder.fingerprints(in: answer) else { return nil }
        return CacheKeyParts(definition: fingerprints.definition, inputs: fingerprints.inputs.map { ($0.path, $0.sha256) },
                             needKeys: needKeys, environment: spec.cacheEnvironment.map { ($0, environment[$0]) }).key
    }

    public func restore(_ task: CachedTask) -> CacheHit? {
        guard let (record, origin) = findRecord(task.key) else { return nil }
        do {
            if let remote, origin == .remote {
                // Every blob is fetched (and checked) into the local store before any output is touched.
                for blob in Set(record.blobs.map(\.sha256)) where !local.hasBlob(blob) {
                    guard let bytes = remote.blob(blob) else { return nil }
                    try local.storeBlob(bytes, as: blob)
                }
                // Kept locally too, so the next run need not ask the server.
                try local.storeRecord(record, key: task.key)
            }
            let log = try local.blob(record.log)
            try OutputPaths.restore(record.outputs, in: task.workingDirectory, from: local)
            try OutputPaths.replace(task.logPath, with: log)
            var lines = String(decoding: log, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if lines.last == "" { lines.removeLast() }
            return CacheHit(logLines: lines, origin: "\(origin.rawValue) cache, \(record.storedBy)")
        } catch {
            warnings.note("cannot restore '\(task.id)' from the cache, so it runs: \(error)")
            return nil
        }
    }

    /// Where a record was found.
    enum Origin: String { case local, remote }

    /// The record under `key`, locally (with every blob it names) or else remotely, with where it was found.
    private func findRecord(_ key: String) -> (ActionRecord, Origin)? {
        if let record = local.record(key), record.blobs.allSatisfy({ local.hasBlob($0.sha256) }) { return (record, .local) }
        if let record = remote?.record(key) { return (record, .remote) }
        return nil
    }

    /// Where a task would be restored from, without restoring it (for `explain` and the dry run): `nil`
    /// when the cache does not hold its key.
    public func origin(ofKey key: String) -> String? {
        findRecord(key).map { record, origin in "\(origin.rawValue) cache, \(record.storedBy)" }
    }

    public func store(_ task: CachedTask) {
        pending.enter()
        defer { pending.leave() }
        do {
            let paths = Fingerprinter().outputPaths(task.outputs, in: task.workingDirectory)
            let outputs = try OutputPaths.snapshot(paths, in: task.workingDirectory, into: local)
            // A task that printed nothing may have no log file: its log is empty.
            let log = access(task.logPath, F_OK) == 0 ? try local.storeBlob(copying: task.logPath) : (sha256: try local.storeBlob([]), size: Int64(0))
            let record = ActionRecord(format: CacheKeyParts.formatVersion, outputs: outputs, log: log.sha256, logSize: log.size,
                                      run: run, host: host, time: Date().formatted(.iso8601), task: task.id.rawValue)
            // The record last: it names only blobs already stored.
            try local.storeRecord(record, key: task.key)
            if let remote, !remote.spec.isReadOnly {
                pending.enter()
                remote.upload(record, key: task.key, from: local) { [pending] in pending.leave() }
            }
        } catch {
            warnings.note("cannot store '\(task.id)' in the cache: \(error)")
        }
    }

    public func finish() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            pending.notify(queue: .global()) { done.resume() }
        }
    }
}

/// Warnings told once per text.
final class Warnings: Sendable {
    private let told = Locked<Set<String>>([])
    private let warn: @Sendable (String) -> Void

    init(_ warn: @escaping @Sendable (String) -> Void) {
        self.warn = warn
    }

    func note(_ text: String) {
        if told.withLock({ $0.insert(text).inserted }) { warn(text) }
    }
}
