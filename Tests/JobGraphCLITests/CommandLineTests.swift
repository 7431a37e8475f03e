import Foundation
import JobGraphBasics
import JobGraphCLI
import JobGraphTestSupport
import Testing

/// The commands that read a pipeline without running it, through the built binary (contract: "The
/// command line", "Exit codes and signals").
@Suite(.hangLimit(minutes: 1))
struct CommandLineTests {
    private static let pipeline = """
        version: 1
        name: tiny
        queues:
          net: {max_concurrent: 1, qos: utility}
        tasks:
          fetch: {description: Get the data., queue: net, priority: high, run: "touch fetch.ran"}
          build: {description: Build it., needs: [fetch], qos: background, run: "touch build.ran"}
          test: {needs: [build], run: "touch test.ran"}
        """

    @Test func versionPrintsTheReleaseAndExitsZero() async throws {
        let directory = try ScratchDirectory("jobgraph-cli")
        defer { directory.remove() }
        let outcome = try await JobGraphBinary.run(["--version"], in: directory)
        #expect(outcome.status == 0)
        #expect(outcome.outputLines == [JobGraphVersion.current])
    }

    @Test func validateAcceptsAValidExample() async throws {
        let directory = try ScratchDirectory("jobgraph-cli")
        defer { directory.remove() }
        let example = Fixtures.repositoryRoot.appendingPathComponent("examples/hello.yaml").path
        let outcome = try await JobGraphBinary.run(["validate", example], in: directory)
        #expect(outcome.status == 0)
        #expect(outcome.outputLines == ["\(example): valid, 4 tasks, 4 dependencies"])
        #expect(outcome.standardError.isEmpty)
    }

    @Test func validateReportsEveryMistakeWithItsPosition() async throws {
        let directory = try ScratchDirectory("jobgraph-cli")
        defer { directory.remove() }
        let fixture = Fixtures.directory.appendingPathComponent("invalid/many-mistakes.yaml")
        try FileManager.default.createDirectory(atPath: directory.file("invalid"), withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: fixture.path, toPath: directory.file("invalid/many-mistakes.yaml"))
        let outcome = try await JobGraphBinary.run(["validate", "invalid/many-mistakes.yaml"], in: directory)
        #expect(outcome.status == 2)
        #expect(outcome.standardOutput.isEmpty)
        let expected = try String(contentsOf: fixture.deletingPathExtension().appendingPathExtension("diagnostics"), encoding: .utf8)
        #expect(outcome.standardError == expected)
        let shape = /^invalid\/many-mistakes\.yaml:\d+:\d+: error: .+$/
        for line in outcome.errorLines { #expect(line.wholeMatch(of: shape) != nil, "\(line)") }
        #expect(outcome.errorLines.count == 15)
    }

    @Test(arguments: [["run", "p.yaml", "--no-such-option"], ["run", "p.yaml", "--jobs", "0"],
                      ["run", "p.yaml", "--progress", "fancy"], ["no-such-command"]])
    func aCommandLineMistakeExitsWith2AndRunsNothing(arguments: [String]) async throws {
        let directory = try ScratchDirectory("jobgraph-cli")
        defer { directory.remove() }
        try directory.write(Self.pipeline, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(arguments, in: directory)
        #expect(outcome.status == 2)
        #expect(outcome.standardError.contains("Error:"))
        #expect(outcome.standardError.contains("Usage:") || outcome.standardError.contains("jobgraph"))
        #expect(!directory.exists("fetch.ran"))
    }

    @Test func graphPrintsMermaid() async throws {
        let directory = try ScratchDirectory("jobgraph-cli")
        defer { directory.remove() }
        try directory.write(Self.pipeline, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["graph", "p.yaml", "--format", "mermaid"], in: directory)
        #expect(outcome.status == 0)
        #expect(outcome.outputLines == [
            "flowchart LR", "  n0[\"fetch<br/>queue: net\"]", "  n1[\"build\"]", "  n2[\"test\"]", "  n0 --> n1", "  n1 --> n2",
        ])
    }

    @Test func listShowsTasksWithDescriptions() async throws {
        let directory = try ScratchDirectory("jobgraph-cli")
        defer { directory.remove() }
        try directory.write(Self.pipeline, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["list", "p.yaml"], in: directory)
        #expect(outcome.status == 0)
        let lines = outcome.outputLines
        #expect(lines.first?.hasPrefix("tiny") == true)
        #expect(lines.contains { $0.hasPrefix("fetch") && $0.hasSuffix("Get the data.") })
        #expect(lines.contains { $0.hasPrefix("build") && $0.hasSuffix("Build it.") })
        #expect(lines.contains { $0.hasPrefix("test") })
    }

    @Test func dryRunPrintsThePlanAndRunsNothing() async throws {
        let directory = try ScratchDirectory("jobgraph-cli")
        defer { directory.remove() }
        try directory.write(Self.pipeline, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run", "--jobs", "2"], in: directory)
        #expect(outcome.status == 0)
        let rows = outcome.outputLines.map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        // step, task, queue, priority, qos …, in start order, then why each would run.
        #expect(rows.contains { $0.prefix(7) == ["1", "fetch", "net", "high", "utility", "-", "run"] })
        #expect(rows.contains { $0.prefix(7) == ["2", "build", "default", "normal", "background", "fetch", "run"] })
        #expect(rows.contains { $0.prefix(7) == ["3", "test", "default", "normal", "default", "build", "run"] })
        #expect(outcome.outputLines.last?.hasSuffix("  may run: it needs 'build', which may run") == true, "\(outcome.outputLines)")
        #expect(!directory.exists("fetch.ran") && !directory.exists(".jobgraph"))
    }
}

/// `--var` sets only what the file declares (docs/cli.md): a misspelt name once set nothing, silently,
/// and every task reran on `environment 'CLI_ARGS' changed`.
@Suite(.hangLimit(minutes: 1))
struct VariableOverrideTests {
    @Test func anUnknownVarIsExitTwoWithANearMatchAndNothingRuns() async throws {
        let directory = try ScratchDirectory("jobgraph-var")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            vars: {CLI_ARGS: ""}
            tasks:
              test: {run: "echo ran > ran.txt"}
            """, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--var", "CLI_ARG=-v"], in: directory)
        #expect(outcome.status == 2)
        #expect(outcome.errorLines == ["error: unknown variable 'CLI_ARG' given with '--var'; did you mean 'CLI_ARGS'?"])
        #expect(!directory.exists("ran.txt"))
    }

    /// just's `JUST_LOG := log` habit: `vars: {JUST_LOG: "{{ log }}"}` once reached the task as `{{ log }}`.
    @Test func aVariableBuiltFromAVariableReachesTheTaskSubstituted() async throws {
        let directory = try ScratchDirectory("jobgraph-var")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            vars: {JUST_LOG: "{{ log }}", log: info}
            tasks:
              test: {run: "echo {{ JUST_LOG }} $JUST_LOG > out.txt"}
            """, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--var", "log=debug"], in: directory)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(directory.read("out.txt") == "debug debug\n")
    }
}

