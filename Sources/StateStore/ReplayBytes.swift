import JobGraphBasics

/// Writes the fields of a `NoOpReplayRecord` as bytes: integers as 8 bytes little-endian, strings as
/// their length and UTF-8 bytes; or, `compact`, integers and lengths in as few bytes as they need. Why
/// not JSON: the record of 100,000 tasks is read on every no-op rerun, and decoding it must cost little
/// beside the stat of each path.
struct ReplayBytesWriter {
    private(set) var bytes: [UInt8] = []

    init() {}

    /// A writer for about `capacity` bytes: grown by doubling, a record of 100,000 tasks (13 MB as it was
    /// written then) held up to 24 MB at once.
    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    mutating func append(_ value: Int64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func append(_ text: String) {
        append(Int64(text.utf8.count))
        bytes.appendUTF8(of: text)
    }

    mutating func append(optional text: String?) {
        if let text { append(Int64(1)); append(text) } else { append(Int64(0)) }
    }

    mutating func append(strings: [String]) {
        append(Int64(strings.count))
        for text in strings { append(text) }
    }

    /// `raw` as it is: a mark the reader expects (`ReplayBytesReader.skip`).
    mutating func append(raw: [UInt8]) {
        bytes.append(contentsOf: raw)
    }

    /// `value` in 7-bit groups, low first, the high bit of each byte saying another follows (LEB128):
    /// a count, a length or a file's size mostly takes one byte where `append(_:)` takes eight.
    mutating func appendCompact(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// A signed `value`, zigzag-coded first (0, -1, 1, -2 … as 0, 1, 2, 3 …) so that a small negative
    /// one stays short too.
    mutating func appendCompact(signed value: Int64) {
        appendCompact(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    mutating func appendCompact(_ text: some StringProtocol) {
        appendCompact(UInt64(text.utf8.count))
        // From contiguous storage, as `appendUTF8(of:)` does: the view's iterator costs more than the copy.
        let appended: Void? = text.utf8.withContiguousStorageIfAvailable { bytes.append(contentsOf: $0) }
        if appended == nil { bytes.append(contentsOf: text.utf8) }
    }

    /// `raw`, its length first, as `appendCompact(_:)` writes a string.
    mutating func appendCompact(bytes raw: UnsafeBufferPointer<UInt8>) {
        appendCompact(UInt64(raw.count))
        bytes.append(contentsOf: raw)
    }

    mutating func appendCompact(strings: [String]) {
        appendCompact(UInt64(strings.count))
        for text in strings { appendCompact(text) }
    }
}

/// Reads what `ReplayBytesWriter` wrote; each read is `nil` past the end, so damaged bytes are no record.
struct ReplayBytesReader {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func integer() -> Int64? {
        guard bytes.count - offset >= 8 else { return nil }
        let value = bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self)
        offset += 8
        return Int64(littleEndian: value)
    }

    /// A count or length: not negative, and no larger than the bytes left could hold.
    mutating func count() -> Int? {
        guard let value = integer(), value >= 0, value <= bytes.count - offset else { return nil }
        return Int(value)
    }

    mutating func string() -> String? {
        count().map { text(ofLength: $0) }
    }

    /// The next `length` bytes as UTF-8; the caller checked they are there.
    private mutating func text(ofLength length: Int) -> String {
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length]), as: UTF8.self)
        offset += length
        return text
    }

    mutating func optionalString() -> String?? {
        switch integer() {
        case 0: return .some(nil)
        case 1: return string().map { .some($0) }
        default: return nil
        }
    }

    /// What `appendCompact(_:)` wrote; `nil` past the end, or for more than 64 bits.
    mutating func compactInteger() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count {
            let byte = bytes[offset]
            offset += 1
            let group = UInt64(byte & 0x7F)
            // The tenth byte may carry only the 64th bit.
            guard shift < 63 || group <= 1 else { return nil }
            value |= group << shift
            if byte < 0x80 { return value }
            shift += 7
            guard shift < 64 else { return nil }
        }
        return nil
    }

    mutating func compactSigned() -> Int64? {
        guard let coded = compactInteger() else { return nil }
        return Int64(bitPattern: coded >> 1) ^ -Int64(bitPattern: coded & 1)
    }

    /// A compact count or length: no larger than the bytes left could hold.
    mutating func compactCount() -> Int? {
        guard let value = compactInteger(), value <= UInt64(bytes.count - offset) else { return nil }
        return Int(value)
    }

    mutating func compactString() -> String? {
        compactCount().map { text(ofLength: $0) }
    }

    mutating func compactStrings() -> [String]? {
        strings(count: compactCount()) { $0.compactString() }
    }

    /// Whether the next bytes are `expected`; they are read when they are.
    mutating func skip(_ expected: [UInt8]) -> Bool {
        guard bytes.count - offset >= expected.count,
              expected.indices.allSatisfy({ bytes[offset + $0] == expected[$0] }) else { return false }
        offset += expected.count
        return true
    }

    mutating func strings() -> [String]? {
        strings(count: count()) { $0.string() }
    }

    /// `count` strings, each read by `read`; `nil` when the count or any of them is.
    private mutating func strings(count: Int?, each read: (inout ReplayBytesReader) -> String?) -> [String]? {
        guard let count else { return nil }
        var result: [String] = []
        result.reserveCapacity(count)
        for _ in 0..<count {
            guard let text = read(&self) else { return nil }
            result.append(text)
        }
        return result
    }
}
