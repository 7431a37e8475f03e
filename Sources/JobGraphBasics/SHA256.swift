/// SHA-256 (FIPS 180-4), streaming: feed bytes with `update`, read the digest with `finalize`.
///
/// Used for `download: {sha256:}` and for the content fingerprints of up-to-date checks. Written here
/// rather than taken from a crypto package: it is small, and the package would cost every build time.
public struct SHA256: Sendable {
    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)
    private var pending: [UInt8] = []
    private var length: UInt64 = 0

    public init() {
        pending.reserveCapacity(64)
    }

    /// Adds bytes to the message.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        length &+= UInt64(bytes.count)
        var offset = 0
        if !pending.isEmpty {
            let take = min(64 - pending.count, bytes.count)
            pending.append(contentsOf: bytes[0..<take])
            offset = take
            if pending.count == 64 {
                pending.withUnsafeBytes { compress($0.baseAddress!) }
                pending.removeAll(keepingCapacity: true)
            }
        }
        while bytes.count - offset >= 64 {
            compress(bytes.baseAddress! + offset)
            offset += 64
        }
        if offset < bytes.count { pending.append(contentsOf: bytes[offset...]) }
    }

    public mutating func update(_ bytes: some Sequence<UInt8>) {
        if let contiguous = bytes.withContiguousStorageIfAvailable({ update(UnsafeRawBufferPointer($0)) }) { return contiguous }
        let array = Array(bytes)
        array.withUnsafeBytes { update($0) }
    }

    /// The 32-byte digest of everything added.
    public consuming func finalize() -> [UInt8] {
        finish()
        return [UInt8](unsafeUninitializedCapacity: 32) { buffer, count in
            writeDigest { index, byte in buffer[index] = byte }
            count = 32
        }
    }

    /// The digest as 64 lower-case hex digits.
    public consuming func finalizeHex() -> String {
        finish()
        let digits: StaticString = "0123456789abcdef"
        // Straight from the state into the string: the up-to-date check hashes every task's definition,
        // and the arrays the digest went through cost more than the hashing (perf, 10,000-task run).
        return String(unsafeUninitializedCapacity: 64) { buffer in
            digits.withUTF8Buffer { digits in
                writeDigest { index, byte in
                    buffer[index * 2] = digits[Int(byte >> 4)]
                    buffer[index * 2 + 1] = digits[Int(byte & 0xF)]
                }
            }
            return 64
        }
    }

    /// Adds the padding and the length: the state is then the digest.
    private mutating func finish() {
        let bitLength = length &* 8
        // 0x80, zeros up to 56 bytes past a block boundary, then the length: at most two blocks.
        let remainder = (pending.count + 1) % 64
        let zeros = remainder <= 56 ? 56 - remainder : 120 - remainder
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1 + zeros + 8) { padding in
            padding[0] = 0x80
            for index in 0..<zeros { padding[1 + index] = 0 }
            for index in 0..<8 { padding[1 + zeros + index] = UInt8(truncatingIfNeeded: bitLength >> UInt64(56 - 8 * index)) }
            update(UnsafeRawBufferPointer(padding))
        }
    }

    /// Calls `write` with each of the digest's 32 bytes, in order.
    @inline(__always)
    private func writeDigest(_ write: (Int, UInt8) -> Void) {
        withUnsafeBytes(of: state) { raw in
            for word in 0..<8 {
                let value = raw.load(fromByteOffset: word * 4, as: UInt32.self)
                write(word * 4, UInt8(value >> 24))
                write(word * 4 + 1, UInt8(truncatingIfNeeded: value >> 16))
                write(word * 4 + 2, UInt8(truncatingIfNeeded: value >> 8))
                write(word * 4 + 3, UInt8(truncatingIfNeeded: value))
            }
        }
    }

    /// The hex digest of some bytes.
    public static func hex(of bytes: some Sequence<UInt8>) -> String {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalizeHex()
    }

    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    /// One 64-byte block.
    private mutating func compress(_ block: UnsafeRawPointer) {
        // The message schedule lives on the stack: an array per 64-byte block cost more than the hashing.
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            for i in 0..<16 {
                let b = block + i * 4
                w[i] = UInt32(b.load(as: UInt8.self)) << 24 | UInt32(b.load(fromByteOffset: 1, as: UInt8.self)) << 16
                    | UInt32(b.load(fromByteOffset: 2, as: UInt8.self)) << 8 | UInt32(b.load(fromByteOffset: 3, as: UInt8.self))
            }
            for i in 16..<64 {
                let s0 = w[i - 15].rotatedRight(7) ^ w[i - 15].rotatedRight(18) ^ (w[i - 15] >> 3)
                let s1 = w[i - 2].rotatedRight(17) ^ w[i - 2].rotatedRight(19) ^ (w[i - 2] >> 10)
                w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
            }
            var (a, b, c, d, e, f, g, h) = state
            Self.k.withUnsafeBufferPointer { k in
                for i in 0..<64 {
                    let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
                    let choice = (e & f) ^ (~e & g)
                    let t1 = h &+ s1 &+ choice &+ k[i] &+ w[i]
                    let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
                    let majority = (a & b) ^ (a & c) ^ (b & c)
                    let t2 = s0 &+ majority
                    (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
                }
            }
            state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f, state.6 &+ g, state.7 &+ h)
        }
    }
}

extension UInt32 {
    @inline(__always)
    fileprivate func rotatedRight(_ count: UInt32) -> UInt32 { (self >> count) | (self << (32 - count)) }
}
