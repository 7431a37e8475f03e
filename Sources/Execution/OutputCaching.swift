import PipelineModel

/// Restores a task's outputs and log from an earlier run's, found by a key over what went into the task,
/// and keeps those of a task that succeeds for later runs (docs/cache.md). The Runner asks it where it
/// decides whether a task runs, for a task with `cache: true` that is not up to date.
///
/// Implementations (the `OutputCache` module) must be safe from any thread.
public protocol OutputCaching: Sendable {
    /// The task's cache key: 64 hex digits over its up-to-date answer (definition and input contents), its
    /// needs' keys and what the cache adds (format, platform, `cache_env`). No I/O: safe on any thread.
    /// - Parameter needKeys: one per need, `nil` for a need that has none (it was not checked).
    /// - Returns: `nil` when the answer carries nothing to key on.
    func key(for spec: TaskSpec, answer: UpToDateAnswer, needKeys: [String?]) -> String?
    /// Restores the task's outputs and log when the cache holds `task.key`; `nil` on a miss. Blocking
    /// (files, the network): only on a worker, never on the event loop's thread.
    func restore(_ task: CachedTask) -> CacheHit?
    /// Keeps a succeeded task's outputs and log under `task.key`. Blocking for the local copy; uploads go on
    /// after it returns, and `finish` waits for them. A failure is a warning, never the task's.
    func store(_ task: CachedTask)
    /// Where the cache holds `key` and who stored it (`local cache, stored by run 3 on build-2 at …`),
    /// without restoring anything; `nil` when it does not. Blocking, as `restore`.
    func origin(ofKey key: String) -> String?
    /// Returns once every store and upload begun has ended.
    func finish() async
}

/// One task as the output cache sees it.
public struct CachedTask: Sendable {
    public var id: TaskID
    public var key: String
    /// Absolute: where the `outputs` patterns start.
    public var workingDirectory: String
    /// The task's `outputs` patterns, rendered.
    public var outputs: [String]
    /// The task's log file (absolute).
    public var logPath: String

    public init(id: TaskID, key: String, workingDirectory: String, outputs: [String], logPath: String) {
        self.id = id
        self.key = key
        self.workingDirectory = workingDirectory
        self.outputs = outputs
        self.logPath = logPath
    }
}

/// A restored task: its outputs are in place and its log file holds the recorded log.
public struct CacheHit: Sendable {
    /// The recorded log's lines, for the output.
    public var logLines: [String]
    /// Where it came from and who stored it: `local cache, stored by run 12 on build-3`.
    public var origin: String

    public init(logLines: [String], origin: String) {
        self.logLines = logLines
        self.origin = origin
    }
}
