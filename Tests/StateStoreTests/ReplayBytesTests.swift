import Testing
@testable import StateStore

/// The bytes of a replay record: compact integers and strings read back as written, and damaged bytes
/// are refused rather than misread.
@Suite struct ReplayBytesTests {
    @Test(arguments: [UInt64(0), 1, 127, 128, 300, 16_383, 16_384, UInt64(UInt32.max), UInt64.max - 1, UInt64.max])
    func aCompactIntegerReadsBackAsWritten(value: UInt64) {
        var writer = ReplayBytesWriter()
        writer.appendCompact(value)
        #expect(writer.bytes.count == max(1, (64 - value.leadingZeroBitCount + 6) / 7))
        let (decoded, isAtEnd) = writer.bytes.withUnsafeBytes { bytes in
            var reader = ReplayBytesReader(bytes)
            return (reader.compactInteger(), reader.isAtEnd)
        }
        #expect(decoded == value)
        #expect(isAtEnd)
    }

    @Test(arguments: [Int64(0), -1, 1, -64, 64, Int64.min, Int64.max, 1_764_000_000_123_456_789])
    func aSignedCompactIntegerReadsBackAsWritten(value: Int64) {
        var writer = ReplayBytesWriter()
        writer.appendCompact(signed: value)
        let decoded = writer.bytes.withUnsafeBytes { bytes in
            var reader = ReplayBytesReader(bytes)
            return reader.compactSigned()
        }
        #expect(decoded == value)
        if value == -1 || value == 1 { #expect(writer.bytes.count == 1, "a small number, either sign, takes one byte") }
    }

    @Test func bytesThatNoCompactIntegerCouldBeAreRefused() {
        let tooLong = [UInt8](repeating: 0xFF, count: 10) + [0x01]  // more than 64 bits
        let unfinished: [UInt8] = [0x80, 0x80]  // a byte says another follows, and none does
        let sixtyFifthBit = [UInt8](repeating: 0xFF, count: 9) + [0x02]
        for bytes in [tooLong, unfinished, sixtyFifthBit] {
            let decoded = bytes.withUnsafeBytes { raw in
                var reader = ReplayBytesReader(raw)
                return reader.compactInteger()
            }
            #expect(decoded == nil, "\(bytes)")
        }
    }

    @Test func aCompactStringLongerThanTheBytesLeftIsRefused() {
        var writer = ReplayBytesWriter()
        writer.appendCompact("hello")
        let cut = Array(writer.bytes.dropLast())
        let decoded = cut.withUnsafeBytes { raw in
            var reader = ReplayBytesReader(raw)
            return reader.compactString()
        }
        #expect(decoded == nil)
    }
}
