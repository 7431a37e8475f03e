import Foundation
import JobGraphBasics
#if canImport(Glibc)
import Glibc
#endif

/// The output cache on disk (docs/cache.md, "The local cache"): blobs under `cas/ab/SHA256`, action
/// records under `ac/ab/KEY`, written under `tmp/` and renamed into place.
///
/// Safe for many runs at once, in one process or several: every entry appears whole, by `rename(2)`, or
/// not at all, and a blob's name is its content's hash, so two runs storing the same blob store the same
/// bytes. A kill at any point leaves at most files under `tmp/`, which nothing reads and `collectGarbage`
/// removes. Each read entry's modification time is set to now: the least recently used go first.
public struct LocalCacheStore: Sendable {
    /// Absolute.
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    /// The default folder: `$XDG_CACHE_HOME/jobgraph`, else `$HOME/.cache/jobgraph`; `nil` with neither set.
    public static func defaultDirectory(environment: [String: String]) -> String? {
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") { return xdg + "/jobgraph" }
        if let home = environment["HOME"], !home.isEmpty { return home + "/.cache/jobgraph" }
        return nil
    }

    func blobPath(_ sha256: String) -> String { "\(directory)/cas/\(sha256.prefix(2))/\(sha256)" }
    func recordPath(_ key: String) -> String { "\(directory)/ac/\(key.prefix(2))/\(key)" }

    // MARK: - Writing

    /// Copies the file at `path` into the store, hashing it on the way.
    /// - Returns: its SHA-256 and size.
    func storeBlob(copying path: String) throws(CacheError) -> (sha256: String, size: Int64) {
        let source = open(path, O_RDONLY | O_CLOEXEC)
        guard source >= 0 else { throw .fileSystem(operation: "open", path: path, errno: errno) }
        defer { close(source) }
        let (temporary, output) = try makeTemporary()
        var hasher = SHA256()
        var size: Int64 = 0
        do {
            try copy(from: source, sourcePath: path, to: output, temporary: temporary) { chunk in
                hasher.update(chunk)
                size += Int64(chunk.count)
            }
        } catch {
            close(output)
            unlink(temporary)
            throw error
        }
        let digest = hasher.finalizeHex()
        try publish(temporary, descriptor: output, at: blobPath(digest), keepingExisting: true)
        return (digest, size)
    }

    /// Stores `bytes` as a blob.
    /// - Returns: their SHA-256.
    @discardableResult
    func storeBlob(_ bytes: [UInt8]) throws(CacheError) -> String {
        var hasher = SHA256()
        hasher.update(bytes)
        let digest = hasher.finalizeHex()
        try storeBlob(bytes, as: digest)
        return digest
    }

    /// Stores bytes already checked to have SHA-256 `digest` (a blob from the remote cache).
    func storeBlob(_ bytes: [UInt8], as digest: String) throws(CacheError) {
        if touch(blobPath(digest)) { return }
        let (temporary, output) = try makeTemporary()
        try write(bytes, to: output, temporary: temporary)
        try publish(temporary, descriptor: output, at: blobPath(digest), keepingExisting: true)
    }

    /// Stores an action record under `key`, replacing any: the blobs it names are stored already.
    func storeRecord(_ record: ActionRecord, key: String) throws(CacheError) {
        let (temporary, output) = try makeTemporary()
        try write(record.encoded(), to: output, temporary: temporary)
        try publish(temporary, descriptor: output, at: recordPath(key), keepingExisting: false)
    }

    /// A fresh file under `tmp/`, open for writing: its name holds the process and a counter, so two runs
    /// (or two threads) never share one.
    private func makeTemporary() throws(CacheError) -> (path: String, descriptor: Int32) {
        let folder = directory + "/tmp"
        for attempt in 0..<2 {
            let path = "\(folder)/\(getpid())-\(Self.counter.next())-\(UInt32.random(in: 0...UInt32.max))"
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if descriptor >= 0 { return (path, descriptor) }
            guard errno == ENOENT, attempt == 0 else { throw .fileSystem(operation: "create", path: path, errno: errno) }
            if let failure = FileCalls.createFolders(folder) { throw .fileSystem(operation: "create", path: failure.folder, errno: failure.code) }
        }
        throw .fileSystem(operation: "create", path: folder, errno: EIO)
    }

    private static let counter = Counter()

    private func write(_ bytes: [UInt8], to output: Int32, temporary: String) throws(CacheError) {
        if let code = bytes.withUnsafeBytes({ FileCalls.writeAll($0, to: output) }) {
            close(output)
            unlink(temporary)
            throw .fileSystem(operation: "write", path: temporary, errno: code)
        }
    }

    /// Makes a finished temporary file an entry: synced first, so that after a crash an entry is whole
    /// or absent, never a name for bytes the disk does not hold yet.
    /// - Parameter keepingExisting: a blob: an existing one has the same content; it is kept (and touched).
    private func publish(_ temporary: String, descriptor: Int32, at path: String, keepingExisting: Bool) throws(CacheError) {
        defer { close(descriptor) }
        if keepingExisting && touch(path) {
            unlink(temporary)
            return
        }
        guard fsync(descriptor) == 0 else {
            let code = errno
            unlink(temporary)
            throw .fileSystem(operation: "sync", path: temporary, errno: code)
        }
        var renamed = rename(temporary, path) == 0
        if !renamed && errno == ENOENT {
            let folder = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
            _ = FileCalls.createFolders(folder)
            renamed = rename(temporary, path) == 0
        }
        guard renamed else {
            let code = errno
            unlink(temporary)
            throw .fileSystem(operation: "rename into", path: path, errno: code)
        }
    }

    // MARK: - Reading

    /// The record under `key`, marked as just used; `nil` when there is none or it cannot be read.
    func record(_ key: String) -> ActionRecord? {
        guard let bytes = try? Self.contents(of: recordPath(key)), let record = ActionRecord.decoded(bytes) else { return nil }
        _ = touch(recordPath(key))
        return record
    }

    /// Whether the store holds the blob, marking it as just used.
    func hasBlob(_ sha256: String) -> Bool { touch(blobPath(sha256)) }

    /// The blob's bytes, checked against their SHA-256; a blob that does not match is deleted.
    func blob(_ sha256: String) throws(CacheError) -> [UInt8] {
        let bytes = try Self.contents(of: blobPath(sha256))
        var hasher = SHA256()
        hasher.update(bytes)
        guard hasher.finalizeHex() == sha256 else {
            unlink(blobPath(sha256))
            throw .corruptBlob(sha256, origin: "local")
        }
        return bytes
    }

    /// Copies a blob to a new file at `path` (which must not exist), with `mode`, checking its SHA-256 on
    /// the way; a blob that does not match is deleted, and so is the new file.
    func copyBlob(_ sha256: String, to path: String, mode: mode_t) throws(CacheError) {
        let source = open(blobPath(sha256), O_RDONLY | O_CLOEXEC)
        guard source >= 0 else { throw .fileSystem(operation: "open", path: blobPath(sha256), errno: errno) }
        defer { close(source) }
        let output = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard output >= 0 else { throw .fileSystem(operation: "create", path: path, errno: errno) }
        var hasher = SHA256()
        do {
            try copy(from: source, sourcePath: blobPath(sha256), to: output, temporary: path) { hasher.update($0) }
        } catch {
            close(output)
            unlink(path)
            throw error
        }
        // The umask may have taken bits away from `open`'s mode.
        fchmod(output, mode)
        close(output)
        guard hasher.finalizeHex() == sha256 else {
            unlink(path)
            unlink(blobPath(sha256))
            throw .corruptBlob(sha256, origin: "local")
        }
        _ = touch(blobPath(sha256))
    }

    private func copy(from source: Int32, sourcePath: String, to output: Int32, temporary: String,
                      each observe: (UnsafeRawBufferPointer) -> Void) throws(CacheError) {
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count == 0 { return }
            if count < 0 {
                if errno == EINTR { continue }
                throw .fileSystem(operation: "read", path: sourcePath, errno: errno)
            }
            let code = buffer.withUnsafeBytes { bytes -> Int32? in
                let chunk = UnsafeRawBufferPointer(rebasing: bytes[0..<count])
                observe(chunk)
                return FileCalls.writeAll(chunk, to: output)
            }
            if let code { throw .fileSystem(operation: "write", path: temporary, errno: code) }
        }
    }

    static func contents(of path: String) throws(CacheError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .fileSystem(operation: "open", path: path, errno: errno) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw .fileSystem(operation: "read", path: path, errno: errno)
            }
            bytes.append(contentsOf: buffer[0..<count])
        }
    }

    /// Sets the entry's modification time to now, the mark of its last use; `false` when it does not exist.
    @discardableResult
    func touch(_ path: String) -> Bool {
        utimensat(AT_FDCWD, path, nil, 0) == 0
    }
}

/// A counter safe from any thread.
final class Counter: Sendable {
    private let value = Locked(0)
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
}
