import Foundation
import JobGraphTestSupport
import Testing

/// `!pattern` in `inputs` and `outputs` excludes what it matches, in order (docs/pipeline.md, `inputs`):
/// `inputs: ["**/*.go", "!**/*_test.go"]` validated, and then reran on `input 'a_test.go' changed`.
@Suite(.hangLimit(minutes: 1))
struct GlobExcludeTests {
    @Test func anExcludedInputChangesNothingWhileAnIncludedOneReruns() async throws {
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              build:
                run: cat src/a.go > out.txt
                inputs: ["src/**/*.go", "!src/**/*_test.go"]
                outputs: [out.txt]
            """)
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.directory.file("src"), withIntermediateDirectories: true)
        try folder.directory.write("package a\n", to: "src/a.go")
        try folder.directory.write("package a // test\n", to: "src/a_test.go")
        #expect(try await folder.run().executed == ["build"])

        try folder.directory.write("package a // test, changed\n", to: "src/a_test.go")
        #expect(try await folder.run().upToDate == ["build"], "an excluded input is no input")

        try folder.directory.write("package a // changed\n", to: "src/a.go")
        #expect(try await folder.run().executed == ["build"])
    }

    @Test func anOutputGlobMustMatchAFileNoLaterExclusionTakesOut() async throws {
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              bundle:
                run: mkdir -p dist && echo x > dist/app.js.map && echo y >> runs.txt
                outputs: ["dist/*", "!dist/*.map"]
            """)
        defer { folder.remove() }
        #expect(try await folder.run().executed == ["bundle"])
        // Only a source map is there: the glob names nothing once the exclusion takes it out.
        #expect(try await folder.run().executed == ["bundle"])
        try folder.directory.write("bundle\n", to: "dist/app.js")
        #expect(try await folder.run().upToDate == ["bundle"])
    }
}
