#if canImport(Glibc)
import Glibc
#endif
import JobGraphBasics
import PipelineModel

/// Up-to-date checks of a whole run's tasks before it starts: the store is read once, in one transaction,
/// and each path is examined once however many tasks name it (one task's output is the next one's input).
///
/// Why: checked one by one as each task started, a no-op rerun of 10,000 tasks opened 10,000 read
/// transactions and examined every shared file once per task that named it. The verdicts are the ones
/// `StateStore.checkUpToDate` gives (both call `judge`).
///
/// Checks may run on several threads at once, each through a `Lane` of its own, while the batch's tables
/// are only read; `merge` then takes in what the lanes examined, once no check is going on. Then
/// `finish()`.
public final class UpToDateBatch {
    private let store: StateStore
    private var stored: [String: StateStore.StoredFingerprints]
    private var known: [String: FileRecord]
    /// By absolute path: what the checks examined, and what was examined ahead for them
    /// (`Snapshot.examineRecordedFiles`), in one table, so a path costs one lookup however it was found;
    /// `nil` inside for a missing path.
    private var statuses: [String: FileStatus?]
    private var refreshed: [FileRecord] = []

    /// What the checks read from the store, in one read transaction.
    struct Snapshot {
        var stored: [String: StateStore.StoredFingerprints]
        var known: [String: FileRecord]
        /// The status of each file in `known`, by absolute path, when `examineRecordedFiles` was called.
        var examinedAhead: [String: FileStatus?] = [:]

        init(of store: StateStore) throws(SQLiteError) {
            (stored, known) = try store.withDatabase { database throws(SQLiteError) in
                try database.readTransaction { () throws(SQLiteError) in
                    (try StateStore.allStoredFingerprints(in: database, namespace: store.taskNamespace), try StateStore.allFileRecords(in: database))
                }
            }
        }

        /// Examines every file the store holds a record of: the inputs of the last successes, most of which
        /// are other tasks' outputs too, so most paths the checks will examine.
        ///
        /// Why: the checks' `stat` calls were 7% of a checked no-op rerun of 100,000 tasks (perf), on the
        /// run's thread; the read ahead has them done on the other core while the pipeline loads.
        ///
        /// Each is examined by its key, relative to the pipeline's folder, opened once: the kernel then walks
        /// only the key's own folders (by absolute path, the walk of the pipeline's folder's path again for
        /// every file was half of this examination's kernel time: perf, checked no-op rerun of 10,000 tasks).
        mutating func examineRecordedFiles(in store: StateStore) {
            // Room for the paths the checks add (about one per stored task): the batch goes on filling this table.
            examinedAhead = Dictionary(minimumCapacity: known.count + stored.count)
            let folder = open(store.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            defer { if folder >= 0 { close(folder) } }
            for key in known.keys {
                let path = store.path(ofFileKey: key)
                examinedAhead[path] = folder >= 0 ? FileStatus(path: key, inFolder: folder) : FileStatus(path: path)
            }
        }
    }

    init(store: StateStore, snapshot: Snapshot) {
        self.store = store
        stored = snapshot.stored
        known = snapshot.known
        statuses = snapshot.examinedAhead
        // About a path per stored input and one per output: growing the table by doubling was 1.6% of a
        // no-op rerun of 100,000 tasks (perf).
        statuses.reserveCapacity(snapshot.known.count + snapshot.stored.count)
    }

    /// What one thread's checks learn until the next `merge`: the batch's tables are not changed meanwhile,
    /// so threads checking at once share them without a lock. Locking them for each path instead cost more
    /// than the second thread gained (a futex call per four tasks, checked no-op rerun of 10,000 tasks).
    public final class Lane {
        /// Paths the batch had not examined, examined by this lane's checks.
        fileprivate var examined: [String: FileStatus?] = [:]
        fileprivate var refreshed: [FileRecord] = []
        /// The same records by path: a file many tasks read (a reference genome) is hashed once per lane,
        /// not once per task (Benchmarks/snakemake.sh, dry run of 20,000 samples: 9.8 s, most of it hashing
        /// one 100 kB file 20,000 times).
        fileprivate var refreshedByPath: [String: FileRecord] = [:]
    }

    /// Whether the store holds a success of `task` since which it did not execute: without one, `check`
    /// says it runs.
    public func hasSuccess(of task: TaskID) -> Bool { causeWithoutFiles(of: task) == nil }

    /// Why `check` says `task` runs whatever its files and definition hold (`StateStore.causeWithoutFiles`).
    public func causeWithoutFiles(of task: TaskID) -> UpToDateVerdict.Reason? { StateStore.causeWithoutFiles(stored[task.rawValue]) }

    /// The verdict on `task`, as `StateStore.checkUpToDate` would give it now; what the check examines
    /// goes into `lane`, which no other thread uses meanwhile.
    public func check(_ task: TaskID, definition: TaskDefinition, in lane: Lane) -> UpToDateCheck {
        if definition.isUntracked { return StateStore.untrackedCheck(definition) }
        let examine = { (path: String) in self.examine(path, in: lane) }
        let files = store.inputFiles(of: definition, status: examine)
        var (check, fresh) = store.judge(task, definition, files: files, stored: stored[task.rawValue], known: known,
                                         alsoKnown: lane.refreshedByPath, status: examine)
        lane.refreshed += fresh
        for record in fresh { lane.refreshedByPath[record.path] = record }
        // A task up to date records nothing, so the run need not hold its definition's text (3 MB for
        // 10,000 tasks); under `--force` no batch is made, and each task is checked at its start, text and all.
        if check.verdict.isUpToDate { check.fingerprints.definitionText = nil }
        return check
    }

    /// A path's status, examined once per batch (once per lane, when lanes check at once).
    private func examine(_ path: String, in lane: Lane) -> FileStatus? {
        if let status = statuses[path] { return status }
        if let status = lane.examined[path] { return status }
        let status = FileStatus(path: path)
        lane.examined[path] = status
        return status
    }

    /// Takes in what the lanes' checks examined and refreshed, in lane order; the lanes start
    /// afresh. Call when no check is going on.
    public func merge(_ lanes: [Lane]) {
        for lane in lanes {
            for (path, status) in lane.examined where statuses.index(forKey: path) == nil {  // else another lane examined it first
                statuses[path] = status
            }
            refreshed += lane.refreshed
            lane.examined.removeAll(keepingCapacity: true)
            lane.refreshed.removeAll()
            lane.refreshedByPath.removeAll()
        }
    }

    /// Stores the content records of the files read afresh, in one transaction, and lets go of what the
    /// checks read: call after the last check.
    public func finish() throws {
        BackgroundRelease.release((stored, known, statuses))
        (stored, known, statuses) = ([:], [:], [:])
        if !refreshed.isEmpty { try store.storeFileRecords(refreshed) }
        refreshed = []
    }
}

extension StateStore {
    /// Reads what every up-to-date check of a run needs from the store, once; takes what
    /// `readUpToDateBatchAhead` read, when it was called.
    public func makeUpToDateBatch() throws -> UpToDateBatch {
        let snapshot = try batchReadAhead.withLock { readAhead in
            defer { readAhead = nil }
            return readAhead
        }?.snapshot() ?? UpToDateBatch.Snapshot(of: self)
        return UpToDateBatch(store: self, snapshot: snapshot)
    }

    /// Starts reading what the next `makeUpToDateBatch` needs, on a thread of its own, unless that read
    /// is already under way. Call only while holding the run lock, and write none of the fingerprints or
    /// file records before that call.
    public func readUpToDateBatchAhead() {
        batchReadAhead.withLock { readAhead in
            if readAhead == nil { readAhead = UpToDateBatchReadAhead(store: self) }
        }
    }

    /// The up-to-date records of the tasks in `namespace` (`taskNamespace`), by task id.
    static func allStoredFingerprints(in database: SQLiteDatabase, namespace: String) throws(SQLiteError) -> [String: StoredFingerprints] {
        // Both tables are keyed by task first (WITHOUT ROWID), so scanned in key order each task's inputs
        // come together, by path in byte order (SQLite's BINARY collation is memcmp), as `difference` walks
        // them: merged in one pass, where a list per task in a table and a sort per task cost about 7,000
        // instructions a task (callgrind, no-op rerun of 10,000 tasks).
        // A namespace's keys are the range from it to the same name ending in U+0020 (it ends in U+001F).
        let range: [SQLiteValue] = namespace.isEmpty ? [.text(""), .null] : [.text(namespace), .text(String(namespace.dropLast()) + " ")]
        let prefixLength = namespace.utf8.count
        // Sized from a count first: grown by doubling, the table's rehashing was a third of the time spent
        // reading the store ahead (perf record, checked no-op rerun of 10,000 layered tasks).
        let count = try database.query("SELECT count(*) FROM task_fingerprints WHERE task >= ?1 AND (?2 IS NULL OR task < ?2)", range) {
            Int($0.integer(0))
        }
        var result = Dictionary<String, StoredFingerprints>(minimumCapacity: count.first ?? 0)
        try database.withCachedStatement("""
            SELECT task, path, sha256 FROM task_inputs WHERE task >= ?1 AND (?2 IS NULL OR task < ?2) ORDER BY task, path
            """) { inputs throws(SQLiteError) in
            try inputs.bind(range)
            var inputTask = try inputs.step() ? inputs.text(0) : nil
            try database.withCachedStatement("""
                SELECT task, definition, succeeded, definition_text FROM task_fingerprints
                WHERE task >= ?1 AND (?2 IS NULL OR task < ?2) ORDER BY task
                """) { rows throws(SQLiteError) in
                try rows.bind(range)
                while try rows.step() {
                    let task = rows.text(0)
                    var list: [TaskFingerprints.Input] = []
                    // Inputs of a task without fingerprints cannot be (the foreign key); passed over all the same.
                    while let other = inputTask, other.precedesInByteOrder(task) {
                        inputTask = try inputs.step() ? inputs.text(0) : nil
                    }
                    while let other = inputTask, other == task {
                        list.append(TaskFingerprints.Input(path: inputs.text(1), sha256: inputs.text(2)))
                        inputTask = try inputs.step() ? inputs.text(0) : nil
                    }
                    result[prefixLength == 0 ? task : String(task.utf8.dropFirst(prefixLength))!] = StoredFingerprints(fingerprints: TaskFingerprints(definition: rows.text(1), inputs: list),
                                                      succeeded: rows.integer(2) != 0, definitionDigest: rows.withBytes(3, TaskDefinition.digest))
                }
            }
        }
        return result
    }

    static func allFileRecords(in database: SQLiteDatabase) throws(SQLiteError) -> [String: FileRecord] {
        // Sized from a count, and filled as the rows come, without a list of them first (see above).
        var records = Dictionary<String, FileRecord>(
            minimumCapacity: try database.query("SELECT count(*) FROM files") { Int($0.integer(0)) }.first ?? 0)
        try database.withCachedStatement("SELECT path, size, mtime_ns, inode, sha256 FROM files") { rows throws(SQLiteError) in
            while try rows.step() {
                let record = FileRecord(path: rows.text(0), size: rows.integer(1), modificationNanoseconds: rows.integer(2),
                                        inode: UInt64(bitPattern: rows.integer(3)), sha256: rows.text(4))
                records[record.path] = record
            }
        }
        return records
    }
}
