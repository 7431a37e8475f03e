import Foundation
import JobGraphTestSupport
import Testing

/// The three real task files of `examples/ports/` (go-task's Taskfile with the website Taskfile it
/// includes, casey/just's justfile, junegunn/fzf's Makefile), each run on a copy as a new user would:
/// `list`, the default goal, named tasks with parameters, and a rerun that finds the work up to date.
@Suite(.hangLimit(minutes: 3))
struct PortsExampleTests {
    /// A copy of `examples/ports/NAME` in a fresh folder.
    private static func copy(_ name: String) throws -> ScratchDirectory {
        let directory = try ScratchDirectory("jobgraph-port-\(name)")
        let source = Fixtures.repositoryRoot.appendingPathComponent("examples/ports/\(name)").path
        for entry in try FileManager.default.contentsOfDirectory(atPath: source) {
            try FileManager.default.copyItem(atPath: source + "/" + entry, toPath: directory.file(entry))
        }
        return directory
    }

    private static func run(_ arguments: [String], in directory: ScratchDirectory) async throws -> JobGraphBinary.Outcome {
        try await JobGraphBinary.run(arguments, in: directory)
    }

    @Test func theGoTaskPortRunsItsDefaultGoalAndItsIncludedWebsiteTasks() async throws {
        let directory = try Self.copy("go-task")
        defer { directory.remove() }
        let validated = try await Self.run(["validate", "jobgraph.yaml"], in: directory)
        #expect(validated.status == 0, "\(validated.standardError)")
        #expect(!validated.standardError.contains("warning"), "\(validated.standardError)")

        let listed = try await Self.run(["list", "jobgraph.yaml"], in: directory)
        #expect(listed.status == 0, "\(listed.standardError)")
        #expect(listed.standardOutput.contains("website:build"), "\(listed.standardOutput)")
        #expect(listed.standardOutput.contains("generate:mocks"), "\(listed.standardOutput)")

        // `default: [lint, test]`.
        let goal = try await Self.run(["run", "jobgraph.yaml", "--progress", "plain"], in: directory)
        #expect(goal.status == 0, "\(goal.standardOutput)\n\(goal.standardError)")
        #expect(goal.standardOutput.contains("lint  executing -> succeeded"), "\(goal.standardOutput)")
        #expect(goal.standardOutput.contains("test  executing -> succeeded"), "\(goal.standardOutput)")
        #expect(!goal.standardOutput.contains("clean "), "a manual task ran: \(goal.standardOutput)")

        // An alias of an included task, its needs, and its folder.
        let website = try await Self.run(["run", "jobgraph.yaml", "website:serve", "PORT=4000", "--progress", "plain"], in: directory)
        #expect(website.status == 0, "\(website.standardOutput)\n\(website.standardError)")
        #expect(website.standardOutput.contains("pnpm preview --host=localhost --port=4000"), "\(website.standardOutput)")
        #expect(website.standardOutput.contains("website:install  executing -> succeeded"), "\(website.standardOutput)")

        // A generated file, then nothing to do on the rerun.
        let generated = try await Self.run(["run", "jobgraph.yaml", "generate", "--progress", "plain"], in: directory)
        #expect(generated.status == 0, "\(generated.standardOutput)\n\(generated.standardError)")
        #expect(directory.exists("internal/mocks/checker_mock.go"))
        let again = try await Self.run(["run", "jobgraph.yaml", "generate:mocks", "--progress", "plain"], in: directory)
        // Its need always runs, so it is checked at its start, and its lines are shown.
        #expect(again.standardOutput.contains("generate:mocks  executing -> up-to-date"), "\(again.standardOutput)")

        // The release asks first; without a terminal it needs --yes, and VERSION is required.
        let missing = try await Self.run(["run", "jobgraph.yaml", "release", "--yes"], in: directory)
        #expect(missing.status == 2, "\(missing.standardError)")
        #expect(missing.standardError.contains("VERSION"), "\(missing.standardError)")
        let released = try await Self.run(["run", "jobgraph.yaml", "release", "VERSION=minor", "--yes", "--progress", "plain"],
                                           in: directory)
        #expect(released.status == 0, "\(released.standardOutput)\n\(released.standardError)")
        #expect(released.standardOutput.contains("Releasing minor"), "\(released.standardOutput)")
    }

    @Test func theJustPortRunsRecipesWithParametersAndHidesItsPrivateOnes() async throws {
        let directory = try Self.copy("just")
        defer { directory.remove() }
        let listed = try await Self.run(["list", "jobgraph.yaml"], in: directory)
        #expect(listed.status == 0, "\(listed.standardError)")
        #expect(!listed.standardOutput.contains("_python"), "\(listed.standardOutput)")
        #expect(listed.standardOutput.contains("polyglot"), "\(listed.standardOutput)")

        let filtered = try await Self.run(["run", "jobgraph.yaml", "filter", "PATTERN=parser", "--progress", "plain"], in: directory)
        #expect(filtered.status == 0, "\(filtered.standardOutput)\n\(filtered.standardError)")
        #expect(filtered.standardOutput.contains("cargo ltest parser"), "\(filtered.standardOutput)")

        let polyglot = try await Self.run(["run", "jobgraph.yaml", "polyglot", "--progress", "plain"], in: directory)
        #expect(polyglot.status == 0, "\(polyglot.standardOutput)\n\(polyglot.standardError)")
        #expect(polyglot.standardOutput.contains("Yo from a shell script!"), "\(polyglot.standardOutput)")
        #expect(polyglot.standardOutput.contains("Hello from python!"), "\(polyglot.standardOutput)")

        let hidden = try await Self.run(["run", "jobgraph.yaml", "_python"], in: directory)
        #expect(hidden.status == 2, "\(hidden.standardError)")

        // `t` is test's alias; the default goal is `test` too.
        let aliased = try await Self.run(["run", "jobgraph.yaml", "t", "--progress", "plain"], in: directory)
        #expect(aliased.status == 0, "\(aliased.standardError)")
        #expect(aliased.standardOutput.contains("cargo ltest"), "\(aliased.standardOutput)")

        let quine = try await Self.run(["run", "jobgraph.yaml", "quine", "--progress", "plain"], in: directory)
        #expect(quine.status == 0, "\(quine.standardOutput)\n\(quine.standardError)")
        #expect(quine.standardOutput.contains("It was a quine!"), "\(quine.standardOutput)")
    }

    @Test func theFzfPortBuildsTheBinaryInstallsItAndCleansInTheOrderGiven() async throws {
        let directory = try Self.copy("fzf")
        defer { directory.remove() }
        let installed = try await Self.run(["run", "jobgraph.yaml", "install", "--progress", "plain"], in: directory)
        #expect(installed.status == 0, "\(installed.standardOutput)\n\(installed.standardError)")
        #expect(directory.exists("bin/fzf"))

        let again = try await Self.run(["run", "jobgraph.yaml", "install", "--progress", "plain"], in: directory)
        #expect(again.standardOutput.contains(" up-to-date in "), "\(again.standardOutput)")
        #expect(!again.standardOutput.contains("bin-fzf  "), "up to date before the run, so no line: \(again.standardOutput)")

        // make's `make clean install`: clean first, then the build again.
        let rebuilt = try await Self.run(["run", "jobgraph.yaml", "clean", "install", "--progress", "plain"], in: directory)
        #expect(rebuilt.status == 0, "\(rebuilt.standardOutput)\n\(rebuilt.standardError)")
        #expect(directory.exists("bin/fzf") && directory.exists("target"))
        // `clean` ends before anything that builds starts, and the item of `target` that writes bin-fzf's
        // input, found from the file, builds the removed binary again.
        let lines = rebuilt.outputLines
        let cleanEnd = lines.firstIndex { $0.contains("clean  executing -> succeeded") }
        let firstBuild = lines.firstIndex { $0.contains("ready -> executing") && !$0.contains("clean") }
        #expect(cleanEnd != nil && firstBuild != nil && cleanEnd! < firstBuild!, "\(rebuilt.standardOutput)")
        #expect(rebuilt.standardOutput.contains("target[amd64]  executing -> succeeded"), "\(rebuilt.standardOutput)")

        let cross = try await Self.run(["run", "jobgraph.yaml", "target[arm7]", "--progress", "plain"], in: directory)
        #expect(cross.status == 0, "\(cross.standardError)")
        #expect(FileManager.default.fileExists(atPath: directory.file("target/fzf-linux_arm7")))
    }
}
