import JobGraphBasics
import Testing

@Suite struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
    ])
    func nistVectors(message: String, digest: String) {
        #expect(SHA256.hex(of: Array(message.utf8)) == digest)
        // The byte form is the same digest; a message fed in two pieces gives it too.
        var hasher = SHA256()
        let bytes = Array(message.utf8)
        hasher.update(bytes.prefix(bytes.count / 2))
        hasher.update(bytes.dropFirst(bytes.count / 2))
        #expect(hasher.finalize().map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() == digest)
    }

    @Test func aMillionAsInUnevenPiecesGiveTheNISTDigest() {
        var hasher = SHA256()
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 997)
        var remaining = 1_000_000
        while remaining > 0 {
            let count = min(remaining, chunk.count)
            chunk[0..<count].withUnsafeBytes { hasher.update($0) }
            remaining -= count
        }
        #expect(hasher.finalizeHex() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}
