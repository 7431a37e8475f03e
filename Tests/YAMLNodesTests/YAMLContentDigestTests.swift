import JobGraphBasics
import Testing
import YAMLNodes

/// `YAMLLoader.contentDigest(of:)` and the digest `loadDocument` returns: equal for files that say the
/// same, whatever their comments and layout, and different for files that say anything else.
@Suite struct YAMLContentDigestTests {
    static let original = """
        version: 1
        vars:
          greeting: hello
        tasks:
          build:
            run: make all
            outputs: [out/app]
          test:
            needs: [build]
            run: make test
        """

    private func digest(_ text: String) -> YAMLContentDigest? {
        YAMLLoader.contentDigest(of: Array(text.utf8))
    }

    /// The digest the loader returns with the document, which a run records.
    private func loadedDigest(_ text: String) -> YAMLContentDigest? {
        var diagnostics = Diagnostics()
        return YAMLLoader.loadDocument(Array(text.utf8), file: "t.yaml", digestingContent: true, diagnostics: &diagnostics)?.contentDigest
    }

    @Test(arguments: [
        // Comments, on their own lines and after values.
        "# the build\n" + original + "\n# end\n",
        original.replacingOccurrences(of: "make all", with: "make all   # everything"),
        // Blank lines, another indentation, a document start marker.
        "---\n" + original.replacingOccurrences(of: "\n  ", with: "\n\n      "),
        // Flow style for block style, and the other way round.
        """
        version: 1
        vars: {greeting: hello}
        tasks:
          build: {run: make all, outputs: [out/app]}
          test: {needs: [build], run: make test}
        """,
        """
        version: 1
        vars:
          greeting: hello
        tasks:
          build:
            run: make all
            outputs:
              - out/app
          test:
            needs:
            - build
            run: make test
        """,
    ])
    func filesThatSayTheSameShareTheDigest(text: String) throws {
        let expected = try #require(digest(Self.original))
        #expect(digest(text) == expected)
        #expect(loadedDigest(text) == expected)
        // Not asked for, none is made.
        var diagnostics = Diagnostics()
        let document = YAMLLoader.loadDocument(Array(text.utf8), file: "t.yaml", digestingContent: false, diagnostics: &diagnostics)
        #expect(document != nil && document?.contentDigest == nil)
    }

    @Test(arguments: [
        Self.original.replacingOccurrences(of: "make all", with: "make al"),
        // The keys of a mapping in another order.
        Self.original.replacingOccurrences(of: "run: make all\n    outputs: [out/app]", with: "outputs: [out/app]\n    run: make all"),
        // A quoted value where a plain one was ('1' is a string, 1 a number), and another quoting.
        Self.original.replacingOccurrences(of: "version: 1", with: "version: '1'"),
        Self.original.replacingOccurrences(of: "greeting: hello", with: "greeting: 'hello'"),
        Self.original.replacingOccurrences(of: "greeting: hello", with: "greeting: \"hello\""),
        // An anchor, and a tag.
        Self.original.replacingOccurrences(of: "version: 1", with: "version: &v 1"),
        Self.original.replacingOccurrences(of: "version: 1", with: "version: !!int 1"),
        // One more list item; a list split in two items where one held both.
        Self.original.replacingOccurrences(of: "[out/app]", with: "[out/app, out/lib]"),
        Self.original.replacingOccurrences(of: "[out/app]", with: "[\"out/app, out/lib\"]"),
        Self.original + "\nextra: ~",
    ])
    func filesThatSayAnythingElseDoNot(text: String) throws {
        let original = try #require(digest(Self.original))
        let other = try #require(digest(text))
        #expect(other != original)
        #expect(loadedDigest(text) == other)
    }

    /// From 256 KB on the loader reads on a thread of its own, in batches of another size; a scalar longer
    /// than the 64 KB the digest hashes at a time is hashed on its own. Neither changes the digest.
    @Test func largeFilesAndLongScalarsGiveTheDigestTheLoaderGives() throws {
        var lines = ["version: 1", "tasks:"]
        for index in 0..<6_000 {
            lines.append("  t\(index): {run: touch out/t\(index), outputs: [out/t\(index)]}  # task \(index)")
        }
        lines.append("  long: {run: echo \(String(repeating: "x", count: 100_000))}")
        let text = lines.joined(separator: "\n") + "\n"
        #expect(text.utf8.count > 256 * 1024)
        let expected = try #require(digest(text))
        #expect(loadedDigest(text) == expected)
        // The same without the comments, and with one character of the long scalar changed.
        let plain = text.replacingOccurrences(of: #"  # task [0-9]+"#, with: "", options: .regularExpression)
        #expect(plain.utf8.count < text.utf8.count)
        #expect(digest(plain) == expected)
        #expect(loadedDigest(plain) == expected)
        let changed = text.replacingOccurrences(of: "xxxxxxxxxx}", with: "xxxxxxxxxy}")
        #expect(digest(changed) != expected)

        // A reader comparing with the digest tells the same content from other content, wherever it differs.
        #expect(expected.checkpoints.count > 4)
        #expect(YAMLLoader.content(of: Array(plain.utf8), is: expected))
        for other in [changed, text.replacingOccurrences(of: "t0: {", with: "t0: &first {"), text + "extra: ~\n"] {
            #expect(digest(other)?.checkpoints.count ?? 0 > 4)
            #expect(!YAMLLoader.content(of: Array(other.utf8), is: expected))
        }
        #expect(!YAMLLoader.content(of: Array("tasks: [unclosed\n".utf8), is: expected))
    }

    @Test func textLibyamlCannotReadHasNoDigest() {
        #expect(digest("tasks: [unclosed\n") == nil)
        #expect(loadedDigest("tasks: [unclosed\n") == nil)
        #expect(digest("key: \"bad \\q escape\"\n") == nil)
    }
}
