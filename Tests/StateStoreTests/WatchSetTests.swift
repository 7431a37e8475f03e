import Execution
import PipelineModel
import Testing
@testable import StateStore

/// Which folders `run --watch` watches and which changed paths call for a rerun, over a real tree.
@Suite struct WatchSetTests {
    private func watchSet(in tree: TemporaryDirectory, inputs: [String], outputs: [String] = [], cwd: String? = nil) -> WatchSet {
        let directory = cwd.map { tree.path + "/" + $0 } ?? tree.path
        let files = DeclaredFiles(tasks: [DeclaredFiles.Task(id: "t", directory: directory, inputs: inputs, outputs: outputs)])
        return WatchSet(files: files, pipelineFile: tree.path + "/p.yaml", stateDirectory: tree.path + "/.jobgraph")
    }

    private func relative(_ folders: [String], in tree: TemporaryDirectory) -> [String] {
        folders.map { $0 == tree.path ? "." : String($0.dropFirst(tree.path.count + 1)) }
    }

    @Test func aFileInTheTopFolderWatchesOnlyThatFolder() throws {
        let tree = try TemporaryDirectory()
        defer { tree.remove() }
        try tree.write("x", to: "src/deep/a.c")
        let set = watchSet(in: tree, inputs: ["a.txt", "*.md"])
        #expect(relative(set.folders, in: tree) == ["."])
        #expect(set.isInput(tree.path + "/a.txt"))
        #expect(set.isInput(tree.path + "/README.md"))
        #expect(!set.isInput(tree.path + "/b.txt"))
        #expect(!set.isInput(tree.path + "/src/x.md"))
    }

    @Test func doubleStarAndNamedFoldersWatchEveryFolderBelowButHiddenOnes() throws {
        let tree = try TemporaryDirectory()
        defer { tree.remove() }
        try tree.write("x", to: "src/deep/er/a.c")
        try tree.write("x", to: "src/.git/HEAD")
        try tree.write("x", to: "assets/logo.png")
        let set = watchSet(in: tree, inputs: ["src/**/*.c", "assets"])
        #expect(relative(set.folders, in: tree) == [".", "assets", "src", "src/deep", "src/deep/er"])
        #expect(set.isInput(tree.path + "/src/a.c"))
        #expect(set.isInput(tree.path + "/src/deep/er/new.c"))
        #expect(!set.isInput(tree.path + "/src/.git/a.c"))
        #expect(set.isInput(tree.path + "/assets/sub/icon.svg"))
        #expect(set.watchesNewFolder(tree.path + "/src/new"))
        #expect(!set.watchesNewFolder(tree.path + "/src/.cache"))
        #expect(!set.watchesNewFolder(tree.path + "/other"))
    }

    /// `!glob` takes out what the entries before it named, as the up-to-date check does.
    @Test func anExcludedInputCallsForNoRerun() throws {
        let tree = try TemporaryDirectory()
        defer { tree.remove() }
        try tree.write("x", to: "src/a.go")
        let set = watchSet(in: tree, inputs: ["src/**/*.go", "!src/**/*_test.go", "src/keep_test.go"])
        #expect(relative(set.folders, in: tree) == [".", "src"])
        #expect(set.isInput(tree.path + "/src/a.go"))
        #expect(!set.isInput(tree.path + "/src/a_test.go"))
        #expect(set.isInput(tree.path + "/src/keep_test.go"), "a later entry names it again")
    }

    @Test func outputsAndTheStateFolderNeverCount() throws {
        let tree = try TemporaryDirectory()
        defer { tree.remove() }
        try tree.write("x", to: "build/keep")
        let set = watchSet(in: tree, inputs: ["**/*.txt", "build"], outputs: ["build/out.txt"])
        #expect(set.isInput(tree.path + "/a.txt"))
        #expect(set.isInput(tree.path + "/build/other.txt"))
        #expect(!set.isInput(tree.path + "/build/out.txt"))
        #expect(!set.isInput(tree.path + "/.jobgraph/logs/t.txt"))
        #expect(!set.folders.contains { $0.hasPrefix(tree.path + "/.jobgraph") })
    }

    @Test func patternsAreTakenInTheTasksFolderAndAMissingFolderByItsParent() throws {
        let tree = try TemporaryDirectory()
        defer { tree.remove() }
        try tree.write("x", to: "web/index.html")
        let set = watchSet(in: tree, inputs: ["pages/*.md"], cwd: "web")
        #expect(relative(set.folders, in: tree) == [".", "web"])
        #expect(set.isInput(tree.path + "/web/pages/a.md"))
        #expect(!set.isInput(tree.path + "/pages/a.md"))
    }
}
