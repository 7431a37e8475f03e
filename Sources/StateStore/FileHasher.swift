#if canImport(Glibc)
import Glibc
#endif
import JobGraphBasics

/// Reads a file's content into a SHA-256 digest; the one place up-to-date checks read input files, so
/// tests can count the reads.
public protocol FileHasher: Sendable {
    /// The lower-case hex SHA-256 of the content of the file at `path` (absolute).
    /// - Throws: when the file cannot be opened or read.
    func sha256(ofFileAt path: String) throws -> String
}

/// Hashes files from disk in 64 KiB reads.
public struct DiskFileHasher: FileHasher {
    public init() {}

    /// - Throws: `StateStoreError.fileSystem` when the file cannot be opened or read.
    public func sha256(ofFileAt path: String) throws -> String {
        let descriptor = retryingInterrupts { open(path, O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { throw StateStoreError.fileSystem(operation: "open", path: path, errno: errno) }
        defer { close(descriptor) }
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { bytes in read(descriptor, bytes.baseAddress, bytes.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw StateStoreError.fileSystem(operation: "read", path: path, errno: errno)
            }
            buffer.withUnsafeBytes { bytes in hasher.update(UnsafeRawBufferPointer(rebasing: bytes[0..<count])) }
        }
        return hasher.finalizeHex()
    }
}
