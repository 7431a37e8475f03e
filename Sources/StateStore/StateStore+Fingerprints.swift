import JobGraphBasics
import PipelineModel

/// Up-to-date checks (contract: `inputs`, `outputs`): a task is up to date when its outputs exist and
/// neither its definition nor its inputs' contents changed since its last success.
extension StateStore {
    /// Judges whether `task` is up to date, and computes the fingerprints to record if it runs and succeeds.
    ///
    /// The definition's `inputs` and `outputs` patterns are taken relative to its working directory (the
    /// task's folder). Input files are re-read only when their size, modification time or inode differ
    /// from the record of their last reading; the new records are stored at once, so a file touched
    /// without a change is read once, not on every run. A task with outputs but no inputs is up to date
    /// while its outputs exist and its definition is unchanged; a task with neither is never up to date.
    /// Call it when the task is about to start, after its needs ended, so their outputs are its inputs.
    /// - Throws: `SQLiteError` when the database cannot be read or written.
    public func checkUpToDate(_ task: TaskID, definition: TaskDefinition) throws -> UpToDateCheck {
        // Never up to date, whatever is stored: a success recorded while it still declared paths was for
        // another definition. Nothing to read.
        if definition.isUntracked { return Self.untrackedCheck(definition) }
        let files = inputFiles(of: definition)
        let (stored, known) = try withDatabase { database throws(SQLiteError) in
            try database.readTransaction { () throws(SQLiteError) in
                (try Self.storedFingerprints(of: fingerprintKey(task), in: database), try Self.fileRecords(files.map(\.key), in: database))
            }
        }
        let (check, refreshed) = judge(task, definition, files: files, stored: stored, known: known)
        if !refreshed.isEmpty { try storeFileRecords(refreshed) }
        return check
    }

    /// A task that declares no paths: never up to date.
    static func untrackedCheck(_ definition: TaskDefinition) -> UpToDateCheck {
        UpToDateCheck(verdict: .outOfDate(.untracked), fingerprints: TaskFingerprints(definition: definition.fingerprint, inputs: []))
    }

    /// The files a definition's `inputs` name now, each with its store key.
    func inputFiles(of definition: TaskDefinition, status: (String) -> FileStatus? = { FileStatus(path: $0) })
        -> [(key: String, path: String)] {
        fingerprinter.files(matching: definition.inputs, in: taskDirectory(definition), status: status).map { (key: fileKey($0), path: $0) }
    }

    /// The verdict on a tracked task from what the store holds and the files say; also the file records
    /// read afresh, for the caller to store. The one place that decides (per task or for a whole run).
    /// - Parameter status: how a path is examined; a whole-run check passes one that examines each path once.
    func judge(_ task: TaskID, _ definition: TaskDefinition, files: [(key: String, path: String)], stored: StoredFingerprints?,
               known: [String: FileRecord], alsoKnown: [String: FileRecord] = [:], status: (String) -> FileStatus? = { FileStatus(path: $0) })
        -> (check: UpToDateCheck, refreshed: [FileRecord]) {
        let (hashed, refreshed, unreadable) = fingerprinter.hashes(of: files, known: known, alsoKnown: alsoKnown, status: status)
        let (fingerprint, encoding) = definition.fingerprintAndEncoding(knownFrom: stored)
        let fingerprints = TaskFingerprints(definition: fingerprint, inputs: hashed, definitionText: encoding)
        let verdict: UpToDateVerdict
        if let reason = Self.difference(from: stored, to: fingerprints) {
            verdict = .outOfDate(explained(reason, of: task, definition: definition))
        } else if let path = unreadable {
            verdict = .outOfDate(.inputUnreadable(path))
        } else if let missing = fingerprinter.firstMissingOutput(definition.outputs, in: taskDirectory(definition), status: status) {
            verdict = .outOfDate(.outputMissing(missing))
        } else {
            verdict = .upToDate
        }
        return (UpToDateCheck(verdict: verdict, fingerprints: fingerprints, hasTrustedSuccess: stored?.succeeded == true), refreshed)
    }

    /// Keeps the content records of files read afresh, so the next check need not read them again.
    func storeFileRecords(_ records: [FileRecord]) throws {
        filesChanged.withLock { $0 = true }
        try withDatabase { database throws(SQLiteError) in
            try database.transaction { () throws(SQLiteError) in try Self.store(records, in: database) }
        }
    }

    /// What a task's last success recorded, and whether it has executed without success since.
    struct StoredFingerprints {
        var fingerprints: TaskFingerprints
        var succeeded: Bool
        /// `TaskDefinition.digest` of the canonical encoding stored with the fingerprint, when read (a
        /// whole-run check reads it): a definition whose encoding has the same digest has the same bytes,
        /// so the same fingerprint. 8 bytes a task instead of the text's 200.
        var definitionDigest: Int? = nil
    }

    /// Why a task runs whatever its files and definition hold: no success on record, or an execution without
    /// success since; `nil` when they decide.
    static func causeWithoutFiles(_ stored: StoredFingerprints?) -> UpToDateVerdict.Reason? {
        guard let stored else { return .neverSucceeded }
        return stored.succeeded ? nil : .lastRunUnsuccessful
    }

    /// Why `current` does not match the stored success, or `nil` when it does; the first changed input in
    /// path order is named.
    static func difference(from stored: StoredFingerprints?, to current: TaskFingerprints) -> UpToDateVerdict.Reason? {
        guard let stored, stored.succeeded else { return causeWithoutFiles(stored) }
        guard stored.fingerprints.definition == current.definition else { return .definitionChanged }
        let before = stored.fingerprints.inputs, after = current.inputs
        var old = 0, new = 0
        while old < before.count || new < after.count {
            guard old < before.count else { return .inputAdded(after[new].path) }
            guard new < after.count else { return .inputRemoved(before[old].path) }
            let oldPath = before[old].path, newPath = after[new].path
            if oldPath == newPath {
                if before[old].sha256 != after[new].sha256 { return .inputChanged(newPath) }
                old += 1
                new += 1
            } else if oldPath.precedesInByteOrder(newPath) {
                return .inputRemoved(oldPath)
            } else {
                return .inputAdded(newPath)
            }
        }
        return nil
    }

    /// - Parameter key: the task's `fingerprintKey`.
    static func storedFingerprints(of key: String, in database: SQLiteDatabase) throws(SQLiteError) -> StoredFingerprints? {
        let row = try database.query("SELECT definition, succeeded FROM task_fingerprints WHERE task = ?1", [.text(key)]) {
            (definition: $0.text(0), succeeded: $0.integer(1) != 0)
        }.first
        guard let row else { return nil }
        var inputs = try database.query("SELECT path, sha256 FROM task_inputs WHERE task = ?1", [.text(key)]) {
            TaskFingerprints.Input(path: $0.text(0), sha256: $0.text(1))
        }
        // SQLite sorts text by its own collation; the comparison above walks in byte order.
        inputs.sort { $0.path.precedesInByteOrder($1.path) }
        return StoredFingerprints(fingerprints: TaskFingerprints(definition: row.definition, inputs: inputs), succeeded: row.succeeded)
    }

    static func fileRecords(_ keys: [String], in database: SQLiteDatabase) throws(SQLiteError) -> [String: FileRecord] {
        guard !keys.isEmpty else { return [:] }
        return try database.withCachedStatement("SELECT size, mtime_ns, inode, sha256 FROM files WHERE path = ?1") { statement throws(SQLiteError) in
            var records: [String: FileRecord] = [:]
            for key in keys {
                try statement.bind([.text(key)])
                if try statement.step() {
                    records[key] = FileRecord(path: key, size: statement.integer(0), modificationNanoseconds: statement.integer(1),
                                              inode: UInt64(bitPattern: statement.integer(2)), sha256: statement.text(3))
                }
                try statement.reset()
            }
            return records
        }
    }

    private static func store(_ records: [FileRecord], in database: SQLiteDatabase) throws(SQLiteError) {
        try database.withCachedStatement("INSERT OR REPLACE INTO files (path, size, mtime_ns, inode, sha256) VALUES (?1, ?2, ?3, ?4, ?5)") { statement throws(SQLiteError) in
            for record in records {
                try statement.bind([.text(record.path), .integer(record.size), .integer(record.modificationNanoseconds),
                                    .integer(Int64(bitPattern: record.inode)), .text(record.sha256)])
                try statement.step()
                try statement.reset()
            }
        }
    }

    /// The task's folder, absolute: the definition's working directory is relative to the pipeline's.
    func taskDirectory(_ definition: TaskDefinition) -> String {
        let folder = definition.workingDirectory
        if folder.hasPrefix("/") { return folder }
        return folder == "." || folder.isEmpty ? directory : String(joining: directory, folder)
    }

    /// The cached content record of a file, by its path (absolute, or relative to `directory`): what the
    /// next check compares the file's status against.
    func fileRecord(at path: String) throws -> FileRecord? {
        let key = fileKey(String.absolute(path, in: directory))
        return try withDatabase { database throws(SQLiteError) in try Self.fileRecords([key], in: database)[key] }
    }
}
