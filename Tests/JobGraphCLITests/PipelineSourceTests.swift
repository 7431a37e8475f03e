import Foundation
import JobGraphTestSupport
import Testing

/// The habits users bring from make and go-task: a discovered `jobgraph.yaml`, `-f FILE`, the file as
/// first argument as before, short flags, and a did-you-mean for a mistyped task; all through the binary.
@Suite(.hangLimit(minutes: 1))
struct PipelineSourceTests {
    private static let pipeline = """
        version: 1
        tasks:
          build: {run: "touch build.ran"}
          test: {needs: [build], run: "touch test.ran"}
          lint: {run: "touch lint.ran"}
        """

    /// A project folder with `name` at its top and an empty `src/deep` folder below.
    private static func project(_ name: String = "jobgraph.yaml", yaml: String = pipeline) throws -> ScratchDirectory {
        let directory = try ScratchDirectory("jobgraph-source")
        try directory.write(yaml, to: name)
        try FileManager.default.createDirectory(atPath: directory.file("src/deep"), withIntermediateDirectories: true)
        return directory
    }

    private static func run(_ arguments: [String], in directory: ScratchDirectory, subfolder: String) async throws
        -> JobGraphBinary.Outcome {
        try await JobGraphBinary.run(arguments, in: ScratchDirectory(existing: directory.file(subfolder)))
    }

    @Test func runFromASubfolderFindsTheFileAboveAndSaysSo() async throws {
        let directory = try Self.project()
        defer { directory.remove() }
        let outcome = try await Self.run(["run", "test", "--progress", "plain"], in: directory, subfolder: "src/deep")
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.errorLines == ["jobgraph: using ../../jobgraph.yaml"])
        // Tasks run in the pipeline's folder, and `test` selects itself and what it needs only.
        #expect(directory.exists("build.ran") && directory.exists("test.ran"))
        #expect(!directory.exists("lint.ran"))
        #expect(!directory.exists("src/deep/build.ran"))
        #expect(directory.exists(".jobgraph/state.db"))
        #expect(outcome.outputLines.first == "[  0.00s] running ../../jobgraph.yaml: 2 tasks, at most \(ProcessInfo.processInfo.activeProcessorCount) at once")
    }

    @Test func aYmlFileIsFoundTooAndEveryPipelineCommandDiscovers() async throws {
        let directory = try Self.project("jobgraph.yml")
        defer { directory.remove() }
        let validate = try await Self.run(["validate"], in: directory, subfolder: "src")
        #expect(validate.status == 0)
        #expect(validate.outputLines == ["../jobgraph.yml: valid, 3 tasks, 1 dependency"])
        #expect(validate.errorLines == ["jobgraph: using ../jobgraph.yml"])
        let list = try await Self.run(["list"], in: directory, subfolder: "src")
        #expect(list.status == 0 && list.outputLines.contains { $0.hasPrefix("build") })
        let graph = try await Self.run(["graph", "test", "--format", "mermaid"], in: directory, subfolder: "src")
        #expect(graph.status == 0)
        #expect(graph.standardOutput.contains("build") && !graph.standardOutput.contains("lint"))
        let history = try await Self.run(["history"], in: directory, subfolder: "src")
        #expect(history.status == 0)
        #expect(history.outputLines == ["no runs of ../jobgraph.yml yet"])
        #expect(!directory.exists("build.ran"), "validate, list, graph and history run nothing")
    }

    @Test func noPipelineFileAnywhereIsACommandLineError() async throws {
        let directory = try ScratchDirectory("jobgraph-source")
        defer { directory.remove() }
        let outcome = try await JobGraphBinary.run(["run"], in: directory)
        #expect(outcome.status == 2)
        #expect(outcome.errorLines == [
            "error: no jobgraph.yaml or jobgraph.yml in '\(directory.path)' or any folder above it; name the pipeline file with -f FILE",
        ])
    }

    @Test(arguments: [["run", "-f", "ci/p.yaml", "lint"], ["run", "--file", "ci/p.yaml", "lint"], ["run", "ci/p.yaml", "lint"],
                      ["run", "lint", "-f", "ci/p.yaml"]])
    func aFileNamedOnTheCommandLineIsReadAndNotAnnounced(arguments: [String]) async throws {
        // A discoverable jobgraph.yaml that must NOT be read: its only task writes a different file.
        let directory = try Self.project(yaml: "version: 1\ntasks:\n  lint: {run: touch wrong.ran}\n")
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.file("ci"), withIntermediateDirectories: true)
        try directory.write(Self.pipeline, to: "ci/p.yaml")
        let outcome = try await JobGraphBinary.run(arguments, in: directory)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardError.isEmpty)
        #expect(directory.exists("ci/lint.ran"))
        #expect(!directory.exists("wrong.ran") && !directory.exists("ci/build.ran"))
    }

    @Test func aCommandWithoutTasksRejectsAnArgumentBesideDashF() async throws {
        let directory = try Self.project()
        defer { directory.remove() }
        let outcome = try await JobGraphBinary.run(["validate", "-f", "jobgraph.yaml", "other.yaml"], in: directory)
        #expect(outcome.status == 2)
        #expect(outcome.errorLines == ["error: unexpected argument 'other.yaml': -f already names the pipeline file"])
        #expect(outcome.standardOutput.isEmpty)
    }

    @Test func aMistypedTaskGetsADidYouMeanAndRunsNothing() async throws {
        let directory = try Self.project()
        defer { directory.remove() }
        let outcome = try await JobGraphBinary.run(["run", "tset"], in: directory)
        #expect(outcome.status == 2)
        #expect(outcome.errorLines == ["jobgraph: using jobgraph.yaml", "error: unknown task 'tset'; did you mean 'test'?"])
        #expect(outcome.standardOutput.isEmpty)
        #expect(!directory.exists("build.ran") && !directory.exists(".jobgraph"))
    }

    @Test func dashNIsADryRun() async throws {
        let directory = try Self.project()
        defer { directory.remove() }
        let outcome = try await JobGraphBinary.run(["run", "-n", "test"], in: directory)
        #expect(outcome.status == 0)
        #expect(outcome.outputLines.first == "plan for jobgraph.yaml: 2 tasks on 1 queue, at most \(ProcessInfo.processInfo.activeProcessorCount) at once")
        #expect(!directory.exists("build.ran"))
    }

    @Test func dashJLimitsTheJobsAndDashKKeepsGoingAfterAFailure() async throws {
        // With one slot, file order starts `bad` first; only --keep-going starts `good` after it failed.
        let yaml = "version: 1\ntasks:\n  bad: {run: exit 1}\n  good: {run: touch good.ran}\n"
        let directory = try Self.project(yaml: yaml)
        defer { directory.remove() }
        let stopping = try await JobGraphBinary.run(["run", "-j", "1", "--progress", "plain"], in: directory)
        #expect(stopping.status == 1)
        #expect(stopping.outputLines.first == "[  0.00s] running jobgraph.yaml: 2 tasks, at most 1 at once")
        #expect(!directory.exists("good.ran"))
        let going = try await JobGraphBinary.run(["run", "-j", "1", "-k", "--progress", "plain"], in: directory)
        #expect(going.status == 1)
        #expect(going.outputLines.first == "[  0.00s] running jobgraph.yaml: 2 tasks, at most 1 at once")
        #expect(directory.exists("good.ran"))
    }
}
