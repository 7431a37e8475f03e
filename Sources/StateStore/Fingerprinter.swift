import JobGraphBasics

/// The file side of up-to-date checks: which files `inputs` and `outputs` patterns name, and the content
/// hashes of inputs, re-reading a file only when its size, modification time or inode differ from the
/// record of its last reading.
///
/// Pure apart from reading the file system; `StateStore` supplies the records and keeps the new ones.
public struct Fingerprinter: Sendable {
    /// Reads file contents; tests plug in one that counts.
    public let hasher: any FileHasher

    public init(hasher: any FileHasher = DiskFileHasher()) {
        self.hasher = hasher
    }

    /// The regular files the `patterns` match below `directory` (absolute), deduplicated and sorted, and
    /// whether each pattern named one existing regular file outright: no wildcard, no folder (which stands
    /// for the files in it), none missing. Only then do the files say all the patterns could match
    /// (`CheckedPaths`).
    /// - Parameter status: how a path without wildcards is examined (a whole-run check examines each once).
    func filesNamed(by patterns: [String], in directory: String, status: (String) -> FileStatus?)
        -> (files: [String], namedOutright: Bool) {
        var files: [String] = []
        var namedOutright = true
        for pattern in patterns {
            // The usual input is one file named outright: one examination, no set, no sort.
            if let path = Self.literalPath(pattern, in: directory), let kind = status(path)?.kind, kind != .directory {
                if kind == .regular { files.append(path) } else { namedOutright = false }
                continue
            }
            namedOutright = false
            files += GlobPattern(pattern).files(in: directory)
        }
        guard files.count > 1 else { return (files, namedOutright) }
        files.sort { $0.precedesInByteOrder($1) }
        // Sorted, so a file two patterns match stands twice in a row.
        guard zip(files, files.dropFirst()).contains(where: { $0 == $1 }) else { return (files, namedOutright) }
        var unique: [String] = []
        unique.reserveCapacity(files.count)
        for file in files where unique.last != file { unique.append(file) }
        return (unique, namedOutright)
    }

    /// The first of `patterns` that names nothing: a path without wildcards must exist (file or folder),
    /// a pattern with wildcards must match at least one file. `nil` when all outputs are there.
    public func firstMissingOutput(_ patterns: [String], in directory: String) -> String? {
        firstMissingOutput(patterns, literalPaths: patterns.map { Self.literalPath($0, in: directory) }, in: directory,
                           status: { FileStatus(path: $0) })
    }

    /// - Parameter literalPaths: `literalPath` of each pattern, worked out once by the caller.
    func firstMissingOutput(_ patterns: [String], literalPaths: [String?], in directory: String,
                            status: (String) -> FileStatus?) -> String? {
        zip(patterns, literalPaths).first { text, path in
            if let path { return status(path) == nil }
            return GlobPattern(text).files(in: directory).isEmpty
        }?.0
    }

    /// The path a pattern without wildcards names; `nil` for one with wildcards.
    static func literalPath(_ text: String, in directory: String) -> String? {
        if let path = GlobPattern.plainPath(text, in: directory) { return path }
        let pattern = GlobPattern(text)
        return pattern.hasWildcards ? nil : pattern.literalPath(in: directory)
    }

    /// The content hash of each file, from `known` when its status still matches, else read afresh.
    /// - Parameters:
    ///   - files: each file's store key and absolute path.
    ///   - known: the stored records, by key.
    /// - Returns: the inputs in the order given; the records read afresh, to store (leaving out a file
    ///   that changed while it was read, so the next check reads it again); the first file that could
    ///   not be read, whose hash is left empty; the status each hash was taken at (`CheckedPaths`), complete
    ///   only when no file was unreadable.
    func hashes(of files: [(key: String, path: String)], known: [String: FileRecord],
                status examine: (String) -> FileStatus? = { FileStatus(path: $0) })
        -> (inputs: [TaskFingerprints.Input], refreshed: [FileRecord], unreadable: String?, statuses: [FileStatus]) {
        var inputs: [TaskFingerprints.Input] = []
        var refreshed: [FileRecord] = []
        var unreadable: String?
        var statuses: [FileStatus] = []
        inputs.reserveCapacity(files.count)
        statuses.reserveCapacity(files.count)
        for file in files {
            guard let status = examine(file.path), status.kind == .regular else {
                unreadable = unreadable ?? file.key
                inputs.append(.init(path: file.key, sha256: ""))
                continue
            }
            statuses.append(status)
            if let record = known[file.key], status.matches(record) {
                inputs.append(.init(path: file.key, sha256: record.sha256))
                continue
            }
            do {
                let digest = try hasher.sha256(ofFileAt: file.path)
                inputs.append(.init(path: file.key, sha256: digest))
                if FileStatus(path: file.path) == status {
                    refreshed.append(FileRecord(path: file.key, size: status.size, modificationNanoseconds: status.modificationNanoseconds,
                                                inode: status.inode, sha256: digest))
                }
            } catch {
                unreadable = unreadable ?? file.key
                inputs.append(.init(path: file.key, sha256: ""))
            }
        }
        return (inputs, refreshed, unreadable, statuses)
    }
}
