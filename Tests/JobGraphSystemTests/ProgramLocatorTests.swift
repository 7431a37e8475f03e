import Foundation
import JobGraphSystem
import Testing

@Suite struct ProgramLocatorTests {
    @Test func findsTheFirstExecutableRegularFileOnThePath() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = directory.path + "/first", second = directory.path + "/second"
        try FileManager.default.createDirectory(atPath: first, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: second, withIntermediateDirectories: false)
        try directory.write("not executable", to: "first/tool")
        try FileManager.default.createDirectory(atPath: second + "/tool-dir", withIntermediateDirectories: false)
        try directory.write("#!/bin/sh\necho found\n", to: "second/tool", executable: true)

        let locator = ProgramLocator()
        #expect(locator.locate("tool", searchPath: "\(first):\(second)") == second + "/tool")
        #expect(locator.locate("tool-dir", searchPath: "\(first):\(second)") == nil)
        #expect(locator.locate("no-such-tool", searchPath: "\(first):\(second)") == nil)
    }

    @Test func remembersAnswersForAbsolutePathsOnly() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("#!/bin/sh\n", to: "tool", executable: true)
        let locator = ProgramLocator()

        #expect(locator.locate("tool", searchPath: directory.path) == directory.path + "/tool")
        try FileManager.default.removeItem(atPath: directory.path + "/tool")
        // Looked up once per distinct name and PATH: the removal goes unnoticed.
        #expect(locator.locate("tool", searchPath: directory.path) == directory.path + "/tool")
        // A different PATH is a different question.
        #expect(locator.locate("tool", searchPath: directory.path + ":/nonexistent") == nil)
    }

    @Test func spawnerSearchesTheChildsPath() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("#!/bin/sh\necho found \"$1\"\n", to: "jobgraph-test-tool", executable: true)
        try await withEventLoop { loop in
            let result = try await run(
                "jobgraph-test-tool here", on: loop, environment: ["PATH=\(directory.path):/usr/bin:/bin"])
            #expect(result.lines == ["found here"])
            #expect(result.end == .exited(.exited(code: 0)))
        }
    }
}
