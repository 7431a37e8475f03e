import Testing
import JobGraphBasics
@testable import StateStore

@Suite struct GlobPatternTests {
    /// A small tree: sources at several depths, hidden files and folders, a non-matching file.
    func makeTree() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        for name in ["Sources/a.swift", "Sources/b.swift", "Sources/Deep/er/c.swift", "Sources/notes.md", "Sources/.hidden.swift",
                     ".build/x.swift", "top.swift", "photo[0].png", "a1.txt", "a22.txt"] {
            try directory.write(name, to: name)
        }
        return directory
    }

    func matches(_ pattern: String, in directory: TemporaryDirectory) -> [String] {
        GlobPattern(pattern).files(in: directory.path).map { String($0.dropFirst(directory.path.count + 1)) }
    }

    /// The shortcut for plain paths names exactly the path the parsed pattern names, and leaves every
    /// other pattern to it.
    @Test(arguments: ["out/t00001", "a.txt", "photo[0].png", "../shared/x", "a/../b", ".hidden", "..", "a/.b/c",
                      "a//b", "./a", "a/./b", "a/.", "a/", "/abs/path", "", ".", "*.swift", "a/**", "a?b", "ü/ñ.txt"])
    func plainPathsNameWhatTheParsedPatternNames(text: String) {
        let directory = "/work/p"
        let pattern = GlobPattern(text)
        if ["out/t00001", "a.txt", "photo[0].png", "../shared/x", ".hidden", "a/.b/c", "ü/ñ.txt"].contains(text) {
            #expect(GlobPattern.plainPath(text, in: directory) != nil, "a plain path takes the shortcut")
        }
        if let path = GlobPattern.plainPath(text, in: directory) {
            #expect(!pattern.hasWildcards)
            #expect(path == pattern.literalPath(in: directory))
        } else {
            // Left to the parser: wildcards, absolute paths, and empty or `.` segments it drops.
            #expect(pattern.hasWildcards || text.hasPrefix("/") || text.isEmpty || text.split(separator: "/", omittingEmptySubsequences: false)
                .contains { $0.isEmpty || $0 == "." })
        }
    }

    @Test func starMatchesWithinOneFolder() throws {
        let tree = try makeTree()
        defer { tree.remove() }
        #expect(matches("Sources/*.swift", in: tree) == ["Sources/a.swift", "Sources/b.swift"])
        #expect(matches("*.swift", in: tree) == ["top.swift"])
        #expect(matches("Sources/*", in: tree) == ["Sources/a.swift", "Sources/b.swift", "Sources/notes.md"])  // files only
    }

    @Test func doubleStarMatchesAnyDepthIncludingNone() throws {
        let tree = try makeTree()
        defer { tree.remove() }
        #expect(matches("Sources/**/*.swift", in: tree) == ["Sources/Deep/er/c.swift", "Sources/a.swift", "Sources/b.swift"])
        #expect(matches("**/*.swift", in: tree) == ["Sources/Deep/er/c.swift", "Sources/a.swift", "Sources/b.swift", "top.swift"])
        #expect(matches("Sources/**", in: tree) == ["Sources/Deep/er/c.swift", "Sources/a.swift", "Sources/b.swift", "Sources/notes.md"])
        #expect(matches("**/er/*.swift", in: tree) == ["Sources/Deep/er/c.swift"])
        #expect(matches("Sources/**/**/c.swift", in: tree) == ["Sources/Deep/er/c.swift"])
    }

    @Test func questionMarkMatchesOneCharacter() throws {
        let tree = try makeTree()
        defer { tree.remove() }
        #expect(matches("a?.txt", in: tree) == ["a1.txt"])
        #expect(matches("a??.txt", in: tree) == ["a22.txt"])
    }

    @Test func hiddenNamesNeedADotInThePattern() throws {
        let tree = try makeTree()
        defer { tree.remove() }
        #expect(matches(".build/*.swift", in: tree) == [".build/x.swift"])
        #expect(matches("Sources/.*.swift", in: tree) == ["Sources/.hidden.swift"])
    }

    @Test func aLiteralPathIsTheFileOrEverythingInTheFolder() throws {
        let tree = try makeTree()
        defer { tree.remove() }
        #expect(matches("top.swift", in: tree) == ["top.swift"])
        #expect(matches("./Sources/../top.swift", in: tree) == ["Sources/../top.swift"])
        #expect(matches("photo[0].png", in: tree) == ["photo[0].png"])  // brackets are not special
        #expect(matches("Sources/Deep", in: tree) == ["Sources/Deep/er/c.swift"])
        #expect(matches("missing.swift", in: tree) == [])
        #expect(GlobPattern(tree.path + "/top.swift").files(in: "/elsewhere") == [tree.path + "/top.swift"])
    }

    /// Watch mode judges a changed file by its name alone; it must name exactly the files the walk of the
    /// disk finds, hidden names and folders included.
    @Test(arguments: ["Sources/*.swift", "*.swift", "Sources/*", "Sources/**/*.swift", "**/*.swift", "Sources/**",
                      "**/er/*.swift", "Sources/**/**/c.swift", "a?.txt", ".build/*.swift", "Sources/.*.swift", "top.swift",
                      "Sources/Deep", "Sources", "photo[0].png", "**"])
    func judgingByNameAgreesWithTheDisk(pattern text: String) throws {
        let tree = try makeTree()
        defer { tree.remove() }
        let pattern = GlobPattern(text)
        let onDisk = Set(pattern.files(in: tree.path))
        let every = GlobPattern("**").files(in: tree.path) + GlobPattern(".build").files(in: tree.path)
            + GlobPattern("Sources/.hidden.swift").files(in: tree.path)
        for path in every {
            #expect(pattern.matches(path: path, in: tree.path) == onDisk.contains(path), "\(path)")
        }
        #expect(!pattern.matches(path: "/elsewhere/top.swift", in: tree.path))
    }

    @Test(arguments: [
        ("*.swift", "a.swift", true), ("*.swift", "a.swiftx", false), ("a*b*c", "aXbYc", true), ("a*b*c", "abcb", false),
        ("*", ".hidden", false), (".*", ".hidden", true), ("?", "é", true), ("*a", "banana", true), ("**", "x", true),
    ])
    func segmentMatching(pattern: String, name: String, expected: Bool) {
        #expect(GlobPattern.matches(name[...], Array(pattern.unicodeScalars)) == expected)
    }
}
