import JobGraphBasics
import Testing

/// Joined in one allocation, a path must still be exactly `directory + "/" + name`.
struct StringPathJoiningTests {
    @Test(arguments: [
        ("/work/p", "out/t00001"), ("", "a"), ("/", "etc"), ("/p", ""), ("/données", "été/ß.png"),
        (String(repeating: "folder/", count: 40) + "deep", "file\u{10FFFF}"),
    ])
    func joinsWithOneSlashExactlyAsConcatenationDoes(directory: String, name: String) {
        let joined = String(joining: directory, name)
        #expect(joined == directory + "/" + name)
        #expect(Array(joined.utf8) == Array(directory.utf8) + [UInt8(ascii: "/")] + Array(name.utf8))
    }
}

struct StringAbsolutePathTests {
    @Test func anAbsolutePathStaysAsItIsAndARelativeOneGoesUnderTheFolder() {
        #expect(String.absolute("/etc/hosts", in: "/work/p") == "/etc/hosts")
        #expect(String.absolute("out/a.png", in: "/work/p") == "/work/p/out/a.png")
        #expect(String.absolute("a", in: "/") == "//a")
    }
}
