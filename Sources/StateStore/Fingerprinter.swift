#if canImport(Glibc)
import Glibc
#endif
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

    /// The regular files the `patterns` match below `directory` (absolute), deduplicated and sorted. A
    /// pattern `!glob` takes out of the files named before it those that `glob` matches, as go-task's
    /// `exclude` does (docs/pipeline.md, `inputs`); a pattern after it may name them again.
    /// - Parameter status: how a path without wildcards is examined (a whole-run check examines each once).
    func files(matching patterns: [String], in directory: String, status: (String) -> FileStatus?) -> [String] {
        // Each glob's files come sorted: they are merged, not sorted again (sorting the `call` task's 4,001
        // inputs was 2.7% of a no-op rerun of Benchmarks/snakemake.sh's 2,000-sample workflow, perf record).
        var files: [String] = []
        var named: [String] = []
        for pattern in patterns {
            if let excluded = Self.exclusion(pattern) {
                files.removeAll { excluded.matches(path: $0, in: directory) }
                named.removeAll { excluded.matches(path: $0, in: directory) }
                continue
            }
            // The usual input is one file named outright: one examination, no set, no sort.
            if let path = Self.literalPath(pattern, in: directory), let kind = status(path)?.kind, kind != .directory {
                if kind == .regular { named.append(path) }
                continue
            }
            files = Self.merged(files, GlobPattern(pattern).files(in: directory))
        }
        guard named.count > 1 || !files.isEmpty else { return named }
        named.sort { $0.precedesInByteOrder($1) }
        return Self.merged(files, named)
    }

    /// The paths of two lists sorted by their bytes, in one list sorted so, each once.
    static func merged(_ first: [String], _ second: [String]) -> [String] {
        var result: [String] = []
        result.reserveCapacity(first.count + second.count)
        var (left, right) = (first.startIndex, second.startIndex)
        while left < first.endIndex || right < second.endIndex {
            let next: String
            if right == second.endIndex || (left < first.endIndex && !second[right].precedesInByteOrder(first[left])) {
                next = first[left]
                left += 1
            } else {
                next = second[right]
                right += 1
            }
            if result.last != next { result.append(next) }
        }
        return result
    }

    /// The paths `patterns` name now, for the output cache to keep: a path without wildcards as it is (a
    /// file, a folder or a symbolic link) when it exists, a glob's matching files; `!glob` takes out the
    /// paths named before it that it matches. Absolute, deduplicated, sorted by their bytes.
    public func outputPaths(_ patterns: [String], in directory: String) -> [String] {
        var paths: [String] = []
        for pattern in patterns {
            if let excluded = Self.exclusion(pattern) {
                paths.removeAll { excluded.matches(path: $0, in: directory) }
                continue
            }
            if let path = Self.literalPath(pattern, in: directory) {
                var info = stat()
                if lstat(path, &info) == 0 { paths.append(path) }
                continue
            }
            paths += GlobPattern(pattern).files(in: directory)
        }
        return Array(Set(paths)).sorted { $0.precedesInByteOrder($1) }
    }

    /// The first of `patterns` that names nothing: a path without wildcards must exist (file or folder),
    /// a pattern with wildcards must match at least one file. `nil` when all outputs are there.
    public func firstMissingOutput(_ patterns: [String], in directory: String) -> String? {
        firstMissingOutput(patterns, in: directory, status: { FileStatus(path: $0) })
    }

    /// An exclusion (`!glob`) names no output; a glob must match a file that no exclusion after it takes out.
    func firstMissingOutput(_ patterns: [String], in directory: String, status: (String) -> FileStatus?) -> String? {
        patterns.indices.first { index in
            let text = patterns[index]
            if Self.exclusion(text) != nil { return false }
            if let path = Self.literalPath(text, in: directory) { return status(path) == nil }
            let exclusions = patterns[(index + 1)...].compactMap(Self.exclusion)
            return !GlobPattern(text).files(in: directory).contains { file in
                !exclusions.contains { $0.matches(path: file, in: directory) }
            }
        }.map { patterns[$0] }
    }

    /// The pattern a `!pattern` entry excludes; `nil` for an entry that names files.
    static func exclusion(_ text: String) -> GlobPattern? {
        text.hasPrefix("!") ? GlobPattern(String(text.dropFirst())) : nil
    }

    /// The path a pattern without wildcards names; `nil` for one with wildcards.
    private static func literalPath(_ text: String, in directory: String) -> String? {
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
    ///   not be read, whose hash is left empty.
    /// - Parameter alsoKnown: records read afresh by earlier checks of the same pass, not stored yet.
    func hashes(of files: [(key: String, path: String)], known: [String: FileRecord], alsoKnown: [String: FileRecord] = [:],
                status examine: (String) -> FileStatus? = { FileStatus(path: $0) })
        -> (inputs: [TaskFingerprints.Input], refreshed: [FileRecord], unreadable: String?) {
        var inputs: [TaskFingerprints.Input] = []
        var refreshed: [FileRecord] = []
        var unreadable: String?
        inputs.reserveCapacity(files.count)
        for file in files {
            guard let status = examine(file.path), status.kind == .regular else {
                unreadable = unreadable ?? file.key
                inputs.append(.init(path: file.key, sha256: ""))
                continue
            }
            if let record = known[file.key] ?? alsoKnown[file.key], status.matches(record) {
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
        return (inputs, refreshed, unreadable)
    }
}
