import JobGraphBasics
import Testing

@Suite struct XXH64Tests {
    /// Values the reference implementation gives (`xxhsum -H1`), as other ports test them.
    @Test(arguments: [
        ("", UInt64(0), UInt64(0xEF46_DB37_51D8_E999)),
        ("a", 0, 0xD24E_C4F1_A98C_6E5B),
        ("abc", 0, 0x44BC_2CF5_AD77_0999),
        ("Nobody inspects the spammish repetition", 0, 0xFBCE_A83C_8A37_8BF1),
        (String(repeating: "a", count: 32), 0, 0x856E_8432_98F9_9AD7),
        ("abc", 12345, 0x0170_0E64_F6F2_3509),
    ])
    func matchesTheReferenceImplementation(text: String, seed: UInt64, expected: UInt64) {
        #expect(XXH64.hash(Array(text.utf8), seed: seed) == expected)
    }

    @Test func everyLengthAndEveryByteCounts() {
        // Lengths through every tail path (32-byte stripes, 8-byte words, a 4-byte word, single bytes).
        let bytes = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        var seen = Set<UInt64>()
        for length in 0...bytes.count {
            let prefix = Array(bytes.prefix(length))
            #expect(seen.insert(XXH64.hash(prefix)).inserted)
            for position in prefix.indices {
                var changed = prefix
                changed[position] ^= 0x01
                #expect(XXH64.hash(changed) != XXH64.hash(prefix))
            }
        }
    }
}
