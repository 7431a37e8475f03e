import JobGraphBasics
import Testing

/// Matching a declared path against a pattern without the disk, as the needs found from files do.
@Suite struct GlobPatternPathTests {
    @Test(arguments: [
        ("/p/data/*.txt", "/p/data/a.txt", true),
        ("/p/data/*.txt", "/p/data/sub/a.txt", false),
        ("/p/data/**/*.txt", "/p/data/sub/deep/a.txt", true),
        ("/p/data/**/*.txt", "/p/data/a.txt", true),
        ("/p/data/**", "/p/data/x/y", true),
        ("/p/data/**/*.txt", "/p/data/.hidden/a.txt", false),
        ("/p/data/*.txt", "/p/data/.a.txt", false),
        ("/p/data/S?.bam", "/p/data/S1.bam", true),
        ("/p/data/S?.bam", "/p/data/S10.bam", false),
        ("/p/out.txt", "/p/out.txt", true),
        ("/p/out.txt", "/p/out.txt.bak", false),
        ("data/*.txt", "data/a.txt", true),
    ])
    func aPathMatchesAsTheWalkWouldFindIt(pattern: String, path: String, expected: Bool) {
        #expect(GlobPattern(pattern).matches(path: path) == expected)
    }

    @Test func theFixedFolderIsEverythingBeforeTheFirstWildcard() {
        #expect(GlobPattern("/p/data/**/*.txt").fixedFolder == "/p/data")
        #expect(GlobPattern("/p/*/x").fixedFolder == "/p")
        #expect(GlobPattern("data/**/*.txt").fixedFolder == "data")
        #expect(GlobPattern("*.txt").fixedFolder == "")
    }
}
