import Foundation
import JobGraphTestSupport
import Testing

/// Variables from commands (docs/pipeline.md, "Variables from commands"): `{sh: COMMAND}` runs once per
/// run, in the pipeline's folder, in the order references need; a failure is an error that names it.
@Suite(.hangLimit(minutes: 2))
struct VariableCommandTests {
    @Test func aCommandRunsOncePerRunInThePipelinesFolderAndFeedsOtherVariables() async throws {
        let directory = try ScratchDirectory("jobgraph-sh")
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.file("project"), withIntermediateDirectories: true)
        try directory.write("""
            version: 1
            vars:
              label: "v-{{ commit }}"
              commit: {sh: "echo ran >> runs.txt; basename \\"$(pwd)\\"; true"}
              quoted: {sh: "printf '%s\\\\n' {{ spaced }}"}
              spaced: "two words"
            tasks:
              a: {run: "echo {{ label }} {{ quoted }} > a.txt"}
              b: {run: "echo {{ commit }} > b.txt"}
            """, to: "project/p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "project/p.yaml"], in: directory)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(directory.read("project/a.txt") == "v-project two words\n")
        #expect(directory.read("project/b.txt") == "project\n")
        #expect(directory.read("project/runs.txt") == "ran\n")

        // `validate` runs no command; a `--var` of the same name replaces it and it is not run.
        #expect(try await JobGraphBinary.run(["validate", "project/p.yaml"], in: directory).status == 0)
        let overridden = try await JobGraphBinary.run(["run", "project/p.yaml", "--var", "commit=given"], in: directory)
        #expect(overridden.status == 0, "\(overridden.standardError)")
        #expect(directory.read("project/a.txt") == "v-given two words\n")
        #expect(directory.read("project/runs.txt") == "ran\n")
    }

    @Test func aFailingCommandIsAnErrorNamingTheVariableItsStatusAndStandardError() async throws {
        let directory = try ScratchDirectory("jobgraph-sh")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            vars:
              commit: {sh: "echo partial; echo 'fatal: not a git repository' >&2; exit 128"}
            tasks:
              a: {run: "echo {{ commit }} > a.txt"}
            """, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml"], in: directory)
        #expect(outcome.status == 2)
        #expect(outcome.errorLines == [
            "p.yaml:3:3: error: the command of variable 'commit' (sh: echo partial; echo 'fatal: not a git repository' >&2; exit 128) exited with status 128: fatal: not a git repository",
        ])
        #expect(directory.read("a.txt") == nil)
    }

    @Test func aCycleThroughACommandIsAnErrorAtItsPlaceAndRunsNothing() async throws {
        let directory = try ScratchDirectory("jobgraph-sh")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            vars:
              a: {sh: "echo ran >> runs.txt; echo {{ b }}"}
              b: "{{ a }}"
            tasks:
              t: {run: "echo {{ a }}"}
            """, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml"], in: directory)
        #expect(outcome.status == 2)
        #expect(outcome.errorLines == ["p.yaml:4:3: error: variable 'b' refers back to itself: a -> b -> a"])
        #expect(directory.read("runs.txt") == nil)
    }

    /// Ctrl-C or SIGTERM while a command of the pipeline's variables runs stops the command and ends jobgraph
    /// as the signal says, running no task. Before, jobgraph waited for the command (its child was in a group
    /// of its own, out of the terminal's reach), then ran the tasks when it had no state yet.
    @Test(arguments: [(SIGINT, Int32(130)), (SIGTERM, Int32(143))])
    func aSignalWhileACommandRunsStopsItAndTheRun(_ signal: (number: Int32, status: Int32)) async throws {
        let (outcome, directory) = try await signalWhileTheVariablesCommandRuns(["run", "p.yaml"], signal.number)
        defer { directory.remove() }
        #expect(outcome.status == signal.status, "\(outcome.standardError)")
        #expect(outcome.standardError.contains("stopped: jobgraph was interrupted"), "\(outcome.standardError)")
        #expect(directory.read("a.txt") == nil)
    }

    /// A command that runs no task ends at once on Ctrl-C or SIGTERM, and takes the variables' command it
    /// waits for with it. Before, it exited and left the command running, unless the command's own watch
    /// saw the signal first.
    @Test(arguments: [(["run", "--dry-run", "p.yaml"], SIGINT, Int32(130)), (["explain", "p.yaml", "a"], SIGTERM, Int32(143))])
    func aSignalWhileACommandRunsForACommandThatRunsNoTaskEndsBoth(_ command: [String], _ signal: Int32, _ status: Int32) async throws {
        let (outcome, directory) = try await signalWhileTheVariablesCommandRuns(command, signal)
        defer { directory.remove() }
        #expect(outcome.status == status, "\(outcome.standardError)")
    }

    /// Starts `command` on a pipeline whose variable runs a long `sleep`, sends `signal` once the sleep has
    /// started, and checks that the sleep is gone after jobgraph's end. The caller removes the directory.
    private func signalWhileTheVariablesCommandRuns(_ command: [String], _ signal: Int32) async throws -> (JobGraphBinary.Outcome, ScratchDirectory) {
        let directory = try ScratchDirectory("jobgraph-sh")
        // A mark of its own for each call, so that tests running at once do not see each other's sleep.
        let mark = "300.\(UInt32.random(in: 100_000...999_999))"
        try directory.write("""
            version: 1
            vars:
              X: {sh: "echo started > started.txt; sleep \(mark); echo x"}
            tasks:
              a: {run: "echo {{ X }} > a.txt"}
            """, to: "p.yaml")
        let running = try JobGraphBinary.start(command, in: directory)
        #expect(await eventually { directory.read("started.txt") != nil })
        running.send(signal)
        let outcome = try await running.finish()
        #expect(await eventually { ProcessTable.living(withArgument: mark).isEmpty })
        return (outcome, directory)
    }
}
