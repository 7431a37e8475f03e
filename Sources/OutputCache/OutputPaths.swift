import JobGraphBasics
#if canImport(Glibc)
import Glibc
#endif

/// A task's outputs as files on disk: taken into the store after a success, put back on a hit.
enum OutputPaths {
    /// Whether a recorded path stays inside the task's folder: relative, without `..` or empty parts.
    static func isConfined(_ path: String) -> Bool {
        !path.isEmpty && !path.hasPrefix("/") && !path.split(separator: "/", omittingEmptySubsequences: false)
            .contains { $0.isEmpty || $0 == ".." || $0 == "." }
    }

    /// The outputs below `roots` (absolute paths in `directory`), each folder walked whole, without
    /// following symbolic links; each file stored in `store` on the way.
    static func snapshot(_ roots: [String], in directory: String, into store: LocalCacheStore)
        throws(CacheError) -> [ActionRecord.Output] {
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        var outputs: [ActionRecord.Output] = []
        var seen = Set<String>()
        func take(_ path: String) throws(CacheError) {
            guard path.hasPrefix(prefix) else { throw .outsideFolder(path) }
            let relative = String(path.dropFirst(prefix.count))
            guard isConfined(relative) else { throw .outsideFolder(path) }
            guard seen.insert(relative).inserted else { return }
            var info = stat()
            guard lstat(path, &info) == 0 else { throw .fileSystem(operation: "examine", path: path, errno: errno) }
            let mode = UInt32(info.st_mode & 0o7777)
            switch info.st_mode & S_IFMT {
            case S_IFREG:
                let (digest, size) = try store.storeBlob(copying: path)
                outputs.append(.init(path: relative, kind: .file, mode: mode, sha256: digest, size: size))
            case S_IFLNK:
                var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
                let count = readlink(path, &buffer, buffer.count - 1)
                guard count >= 0 else { throw .fileSystem(operation: "read the link", path: path, errno: errno) }
                let target = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                outputs.append(.init(path: relative, kind: .symlink, target: target))
            case S_IFDIR:
                outputs.append(.init(path: relative, kind: .directory, mode: mode))
                for entry in DirectoryEntry.entries(of: path).sorted(by: { $0.name.precedesInByteOrder($1.name) }) {
                    try take(path + "/" + entry.name)
                }
            default:
                // A socket or a FIFO holds nothing to restore.
                break
            }
        }
        for root in roots { try take(root) }
        return outputs
    }

    /// Puts a record's outputs in place below `directory`: every file is first copied from its blob (and
    /// checked) beside its final path, and only once all are there is each renamed over its path, so an
    /// output is the old file or the new one, never a part. Folders are made first.
    /// - Throws: `CacheError.corruptBlob` for a blob that does not match (deleted from the store); nothing
    ///   is renamed then, and the copies are removed.
    static func restore(_ outputs: [ActionRecord.Output], in directory: String, from store: LocalCacheStore) throws(CacheError) {
        let stamp = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        var staged: [(temporary: String, path: String, isFolder: Bool)] = []
        func discard() { for entry in staged where !entry.isFolder { unlink(entry.temporary) } }
        for (index, output) in outputs.enumerated() {
            let path = directory + "/" + output.path
            let folder = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
            if let failure = FileCalls.createFolders(folder) {
                discard()
                throw .fileSystem(operation: "create", path: failure.folder, errno: failure.code)
            }
            let name = path[path.index(after: path.lastIndex(of: "/") ?? path.startIndex)...]
            let temporary = "\(folder)/.\(name).jobgraph-restore-\(stamp)-\(index)"
            do {
                switch output.kind {
                case .directory:
                    if !isFolder(path) { removeTree(path) }
                    if mkdir(path, mode_t(output.mode ?? 0o755)) != 0 && errno != EEXIST {
                        throw CacheError.fileSystem(operation: "create", path: path, errno: errno)
                    }
                    chmod(path, mode_t(output.mode ?? 0o755))
                    staged.append((path, path, true))
                case .file:
                    try store.copyBlob(output.sha256 ?? "", to: temporary, mode: mode_t(output.mode ?? 0o644))
                    staged.append((temporary, path, false))
                case .symlink:
                    guard symlink(output.target ?? "", temporary) == 0 else {
                        throw CacheError.fileSystem(operation: "create the link", path: temporary, errno: errno)
                    }
                    staged.append((temporary, path, false))
                }
            } catch let error as CacheError {
                discard()
                throw error
            } catch {
                discard()
                throw .fileSystem(operation: "restore", path: path, errno: EIO)
            }
        }
        for entry in staged where !entry.isFolder {
            // A folder where a file now goes (the task's outputs changed shape) is taken away first.
            if isFolder(entry.path) { removeTree(entry.path) }
            if rename(entry.temporary, entry.path) != 0 {
                let code = errno
                discard()
                throw .fileSystem(operation: "rename into", path: entry.path, errno: code)
            }
        }
    }

    static func isFolder(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    /// Removes `path` and, for a folder, all below it, without following links.
    static func removeTree(_ path: String) {
        if isFolder(path) {
            for entry in DirectoryEntry.entries(of: path) { removeTree(path + "/" + entry.name) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }

    /// Writes `bytes` to `path` through a temporary file beside it and a rename.
    static func replace(_ path: String, with bytes: [UInt8]) throws(CacheError) {
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
        _ = FileCalls.createFolders(folder)
        let temporary = "\(path).jobgraph-restore-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw .fileSystem(operation: "create", path: temporary, errno: errno) }
        let code = bytes.withUnsafeBytes { FileCalls.writeAll($0, to: descriptor) }
        close(descriptor)
        if let code {
            unlink(temporary)
            throw .fileSystem(operation: "write", path: temporary, errno: code)
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw .fileSystem(operation: "rename into", path: path, errno: code)
        }
    }
}
