#if canImport(Glibc)
import Glibc
#endif
import Foundation
import JobGraphBasics
import PipelineModel

/// The state in `.jobgraph/` beside a pipeline file (contract: "State lives in `.jobgraph/`"): the run
/// lock, the run history and the fingerprints of up-to-date checks, in the SQLite file `state.db`.
///
/// Safe from any thread: every database call runs under one lock on one connection, while globbing and
/// hashing files happen outside it. Each write is one transaction, so killing the process at any moment
/// leaves a database the next run opens and trusts.
public final class StateStore: Sendable {
    /// The pipeline's folder, absolute: input paths inside it are recorded relative to it.
    public let directory: String
    /// `directory/.jobgraph`.
    public let stateDirectory: String
    /// Reads input files for their fingerprints.
    public let fingerprinter: Fingerprinter
    /// Runs kept per pipeline; older ones are dropped when a run begins.
    public let retainedRuns: Int
    let database: Locked<SQLiteDatabase>
    /// Set when `open` found `state.db` damaged and moved it aside: the CLI warns with it.
    public let recovery: StateFileRecovery?
    /// Opened by `openReadOnly`: checks keep what they learn to themselves.
    public let isReadOnly: Bool
    /// What the up-to-date records of this pipeline's tasks are keyed under, before the task id: the
    /// pipeline file's name and U+001F, so that pipelines beside each other never share one (docs/state.md,
    /// "The run lock"); empty for a store opened for no pipeline, or read-only from a file older than version 9.
    let taskNamespace: String
    /// `directory` ending in `/`: made once, not for every file key (a no-op rerun makes 20,000 keys).
    private let directoryPrefix: String
    /// Whether closing the file records it as sound (`StateFileSeal`): set when a run has finished
    /// writing, cleared when one begins.
    private let sealing = Locked(false)
    /// Whether this process changed the file records or the inputs of a success, so that `finishRun` may
    /// have file records to forget.
    let filesChanged = Locked(false)
    /// What `readUpToDateBatchAhead` reads, for the next `makeUpToDateBatch`.
    let batchReadAhead = Locked<UpToDateBatchReadAhead?>(nil)
    /// Every task with a row in the history, read when `hasRecordedRun` is first asked, then kept up to
    /// date by `record`; `nil` until then.
    let recordedTasks = Locked<Set<String>?>(nil)

    /// Opens the state of the pipelines in `directory`, creating `.jobgraph/` and `state.db` when missing.
    ///
    /// A `state.db` that is not a database or fails `PRAGMA quick_check` is moved aside and replaced by a
    /// fresh one (`recovery` says so); one written by a newer jobgraph is refused and left untouched.
    /// - Parameters:
    ///   - directory: the pipeline file's folder; a relative path is taken from the working directory.
    ///   - fingerprinter: how input files are read; the default reads them from disk.
    ///   - retainedRuns: runs kept per pipeline, at least 1.
    ///   - now: the time a damaged file's new name records.
    ///   - pipelineFile: the pipeline whose tasks' up-to-date records are read and written; `nil` for
    ///     commands that read only the history.
    /// - Throws: `StateStoreError` when the folder cannot be made, `SQLiteError` when the database cannot
    ///   be opened (`newerSchema` when a newer jobgraph wrote it).
    public static func open(directory: String, fingerprinter: Fingerprinter = Fingerprinter(), retainedRuns: Int = 50,
                            now: Date = Date(), pipelineFile: String? = nil) throws -> StateStore {
        let directory = absolute(directory)
        let path = try makeStateDirectory(in: directory) + "/state.db"
        var recovery: StateFileRecovery?
        do {
            if !StateFileSeal.isIntact(path) { try StateFileRecovery.vet(path) }
        } catch let error as SQLiteError where error.isCorruption {
            recovery = try StateFileRecovery.moveAside(path, reason: error.message, now: now)
        }
        return try StateStore(directory: directory, location: .path(path), fingerprinter: fingerprinter,
                              retainedRuns: retainedRuns, recovery: recovery, pipelineFile: pipelineFile)
    }

    /// Where the state of the pipelines in `directory` (the pipeline file's folder) lives: `.jobgraph/state.db`.
    public static func databasePath(inPipelineDirectory directory: String) -> String {
        directory + "/.jobgraph/state.db"
    }

    /// Opens the state of the pipelines in `directory` only to read it, as a dry run does: no run lock,
    /// nothing written, not even the records of files it reads. `nil` when there is no `state.db` yet.
    /// - Parameter pipelineFile: the pipeline whose tasks' up-to-date records are read (see `open`).
    /// - Throws: `SQLiteError` when the database cannot be opened (`newerSchema` when a newer jobgraph wrote it).
    public static func openReadOnly(directory: String, fingerprinter: Fingerprinter = Fingerprinter(),
                                    pipelineFile: String? = nil) throws -> StateStore? {
        let directory = absolute(directory)
        let path = databasePath(inPipelineDirectory: directory)
        guard FileStatus(path: path) != nil else { return nil }
        let store = try StateStore(directory: directory, location: .path(path), fingerprinter: fingerprinter, retainedRuns: 1,
                                   readOnly: true, pipelineFile: pipelineFile)
        // A file a first run created but was killed before it made the tables: as good as none.
        return try store.withDatabase { database throws(SQLiteError) in try database.userVersion() } == 0 ? nil : store
    }

    /// A store whose database lives in memory and vanishes with it, for tests; `.jobgraph/` is created
    /// only when the run lock is taken.
    public static func inMemory(directory: String, fingerprinter: Fingerprinter = Fingerprinter(), retainedRuns: Int = 50,
                                pipelineFile: String? = nil) throws -> StateStore {
        try StateStore(directory: absolute(directory), location: .memory, fingerprinter: fingerprinter, retainedRuns: retainedRuns,
                       pipelineFile: pipelineFile)
    }

    init(directory: String, location: SQLiteLocation, fingerprinter: Fingerprinter, retainedRuns: Int,
         recovery: StateFileRecovery? = nil, readOnly: Bool = false, pipelineFile: String? = nil) throws {
        self.directory = directory
        directoryPrefix = directory.hasSuffix("/") ? directory : directory + "/"
        self.recovery = recovery
        stateDirectory = directory + "/.jobgraph"
        self.fingerprinter = fingerprinter
        self.retainedRuns = max(1, retainedRuns)
        self.isReadOnly = readOnly
        let connection = try SQLiteDatabase(location: location, readOnly: readOnly)
        if readOnly { try StateSchema.checkReadable(connection) } else { try StateSchema.migrate(connection) }
        // A file older than version 9 keeps its records by bare task id until a run migrates it.
        let namespaced = try !readOnly || connection.userVersion() >= StateSchema.namespacedVersion
        taskNamespace = pipelineFile.map { namespaced ? Self.pipelineKey($0) + "\u{1F}" : "" } ?? ""
        if case .path(let path) = location, !readOnly {
            connection.afterClose = { [sealing] in if sealing.withLock({ $0 }) { StateFileSeal.seal(path) } }
        }
        database = Locked(connection)
    }

    /// Whether closing the store records the file as sound, so that the next open need not check it:
    /// true once a run has finished writing it whole, false while one writes.
    func sealsOnClose(_ seals: Bool) {
        sealing.withLock { $0 = seals }
    }

    // MARK: - Run lock

    /// `.jobgraph/<name>.lock`, the run lock of the pipeline file named `pipelineFile` in this folder.
    public func lockPath(for pipelineFile: String) -> String { stateDirectory + "/" + Self.pipelineKey(pipelineFile) + ".lock" }

    /// Takes the pipeline's run lock for this process, or fails at once when another process holds it;
    /// a run nested in the holder's goes on under its lock (see `RunLock`).
    /// - Parameters:
    ///   - pipelineFile: the pipeline file, as the user named it.
    ///   - environment: this process's environment, which tells a nested run (`RunLock.heldVariable`).
    /// - Returns: the lock, held until `release()` or until it is deinitialized; keep it for the whole run.
    /// - Throws: `StateStoreError.runLockHeld(pid:)`, whose description is the line to print before
    ///   exiting with status 2; `StateStoreError.fileSystem` when the lock file cannot be made.
    public func acquireRunLock(for pipelineFile: String, environment: [String: String] = [:]) throws -> RunLock {
        _ = try Self.makeStateDirectory(in: directory)
        return try RunLock.acquire(path: lockPath(for: pipelineFile), waiting: false, environment: environment)
    }

    /// Takes the pipeline's run lock, blocking the calling thread until the holder lets go (`--wait`).
    public func waitForRunLock(for pipelineFile: String, environment: [String: String] = [:]) throws -> RunLock {
        _ = try Self.makeStateDirectory(in: directory)
        return try RunLock.acquire(path: lockPath(for: pipelineFile), waiting: true, environment: environment)
    }

    // MARK: - Maintenance

    /// `PRAGMA integrity_check`: `["ok"]` for a sound database, else SQLite's list of problems.
    public func integrityCheck() throws -> [String] {
        try withDatabase { database throws(SQLiteError) in try database.integrityCheck() }
    }

    /// Runs `body` on the connection under the store's lock.
    /// - Throws: `SQLiteError` (`SQLITE_MISUSE`) once `close()` has closed the store.
    func withDatabase<Result>(_ body: (SQLiteDatabase) throws(SQLiteError) -> Result) throws(SQLiteError) -> Result {
        try database.withLock { database throws(SQLiteError) in
            guard !database.isClosed else { throw SQLiteError.closed }
            return try body(database)
        }
    }

    /// Closes the state file now, sealing it when a run finished writing it (`sealsOnClose`), so that the
    /// next run need not check it. Call while holding the run lock, after the last write.
    ///
    /// Why not at the store's release: a process that exits while a thread still holds the store (the
    /// read-ahead's, a background release) never closes it, and the next run then ran `PRAGMA
    /// quick_check` over the whole file: 5 of 30 no-op reruns of Benchmarks/snakemake.sh's 2,000-sample
    /// workflow under stress-ng --cpu 2 left the seal unwritten, and quick_check of its 37 MB file took
    /// 233 of the next run's 1,004 samples (perf record).
    public func close() {
        database.withLock { $0.close() }
    }

    /// The name a pipeline's runs are filed under: its file's name, since `.jobgraph/` sits beside it and
    /// `ci.yaml`, `./ci.yaml` and `/work/ci.yaml` all mean the same file there.
    static func pipelineKey(_ pipelineFile: String) -> String {
        let name = pipelineFile.split(separator: "/").last.map(String.init) ?? pipelineFile
        return name.isEmpty ? pipelineFile : name
    }

    /// The key of a task's up-to-date records (`task_fingerprints`, `task_inputs`): its id in this pipeline's namespace.
    func fingerprintKey(_ task: TaskID) -> String { taskNamespace.isEmpty ? task.rawValue : taskNamespace + task.rawValue }

    /// The absolute path of a file by its store key (`fileKey`).
    func path(ofFileKey key: String) -> String {
        key.hasPrefix("/") ? key : directoryPrefix + key
    }

    /// The key of a file in the `files` and `task_inputs` tables: relative to `directory` when inside it.
    func fileKey(_ path: String) -> String {
        guard path.hasPrefix(directoryPrefix) else { return path }
        // Cut by bytes: `dropFirst` on a String walks characters (1,700 instructions a key).
        return String(path[path.utf8.index(path.startIndex, offsetBy: directoryPrefix.utf8.count)...])
    }

    private static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        let cwd = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if path == "." || path.isEmpty { return cwd }
        return (cwd == "/" ? "" : cwd) + "/" + (path.hasPrefix("./") ? String(path.dropFirst(2)) : path)
    }

    /// Creates `.jobgraph/` with a `.gitignore` of `*`, so the state is never committed by accident.
    private static func makeStateDirectory(in directory: String) throws(StateStoreError) -> String {
        let path = directory + "/.jobgraph"
        if mkdir(path, 0o755) == 0 {
            let ignore = path + "/.gitignore"
            let descriptor = Glibc.open(ignore, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            if descriptor >= 0 {
                // Best effort: a missing .gitignore costs nothing but tidiness.
                _ = "*\n".withCString { write(descriptor, $0, 2) }
                Glibc.close(descriptor)
            }
        } else if errno != EEXIST {
            throw .fileSystem(operation: "create", path: path, errno: errno)
        } else if FileStatus(path: path)?.kind != .directory {
            throw .fileSystem(operation: "use", path: path, errno: ENOTDIR)
        }
        return path
    }
}
