import CNettle

/// SHA-256 (FIPS 180-4), streaming: feed bytes with `update`, read the digest with `finalize`.
///
/// Used for `download: {sha256:}`, the content fingerprints of up-to-date checks and the output cache's
/// keys. The compression is nettle's, which uses the CPU's SHA instructions where it has them: several
/// times faster than the Swift code it replaced, in a release build, and hundreds of times in a debug one
/// (figures in the commit that made the change).
public struct SHA256: Sendable {
    private var context = sha256_ctx()

    public init() {
        nettle_sha256_init(&context)
    }

    /// Adds bytes to the message.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        nettle_sha256_update(&context, bytes.count, base.assumingMemoryBound(to: UInt8.self))
    }

    public mutating func update(_ bytes: some Sequence<UInt8>) {
        if let contiguous = bytes.withContiguousStorageIfAvailable({ update(UnsafeRawBufferPointer($0)) }) { return contiguous }
        let array = Array(bytes)
        array.withUnsafeBytes { update($0) }
    }

    /// The 32-byte digest of everything added.
    public consuming func finalize() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { buffer, count in
            nettle_sha256_digest(&context, 32, buffer.baseAddress!)
            count = 32
        }
    }

    /// The digest as 64 lower-case hex digits.
    public consuming func finalizeHex() -> String {
        let digits: StaticString = "0123456789abcdef"
        // Straight from the digest into the string: the up-to-date check hashes every task's definition,
        // and the arrays the digest went through cost more than the hashing (perf, 10,000-task run).
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { digest in
            nettle_sha256_digest(&context, 32, digest.baseAddress!)
            return String(unsafeUninitializedCapacity: 64) { buffer in
                digits.withUTF8Buffer { digits in
                    for (index, byte) in digest.enumerated() {
                        buffer[index * 2] = digits[Int(byte >> 4)]
                        buffer[index * 2 + 1] = digits[Int(byte & 0xF)]
                    }
                }
                return 64
            }
        }
    }

    /// The hex digest of some bytes.
    public static func hex(of bytes: some Sequence<UInt8>) -> String {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalizeHex()
    }
}
