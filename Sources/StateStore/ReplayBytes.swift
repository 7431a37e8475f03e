import JobGraphBasics

/// Writes the fields of a `NoOpReplayRecord` as bytes: integers as 8 bytes little-endian, strings as
/// their length and UTF-8 bytes. Why not JSON: the record of 100,000 tasks is read on every no-op
/// rerun, and decoding it must cost little beside the stat of each path.
struct ReplayBytesWriter {
    private(set) var bytes: [UInt8] = []

    init() {}

    /// A writer for about `capacity` bytes: a record of 100,000 tasks (13 MB) grown by doubling held up to
    /// 24 MB at once.
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
        guard let length = count() else { return nil }
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

    mutating func strings() -> [String]? {
        guard let count = count() else { return nil }
        var result: [String] = []
        result.reserveCapacity(count)
        for _ in 0..<count {
            guard let text = string() else { return nil }
            result.append(text)
        }
        return result
    }
}
