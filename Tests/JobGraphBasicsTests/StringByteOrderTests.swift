import JobGraphBasics
import Testing

/// The order `state.db` keeps its rows in and the replay record its paths: bytes, not characters.
struct StringByteOrderTests {
    @Test func ordersByUTF8BytesAsSQLiteBinaryDoes() {
        // "Z" (0x5A) before "a" (0x61); a prefix before what extends it; "é" (0xC3 0xA9) after every ASCII
        // byte; a decomposed "e\u{301}" (0x65 0xCC 0x81) before the precomposed "é", which String's `<`
        // holds equal to it.
        let sorted = ["out/é", "out/a", "out/Z", "out/ab", "out/e\u{301}", "out/", "out/a/b", "out/\u{10FFFF}"]
            .sorted { $0.precedesInByteOrder($1) }
        #expect(sorted == ["out/", "out/Z", "out/a", "out/a/b", "out/ab", "out/e\u{301}", "out/é", "out/\u{10FFFF}"])
        #expect(sorted == sorted.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }

    @Test func equalStringsDoNotPrecedeEachOther() {
        let long = String(repeating: "folder/", count: 40) + "file"
        #expect(!long.precedesInByteOrder(long))
        #expect(!"".precedesInByteOrder(""))
        #expect("".precedesInByteOrder("a"))
        // Small (inline) and large (heap) strings alike.
        #expect("t00001".precedesInByteOrder("t00002"))
        #expect((long + "1").precedesInByteOrder(long + "2"))
    }
}
