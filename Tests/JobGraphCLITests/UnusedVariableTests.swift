import Foundation
import JobGraphTestSupport
import Testing

/// Issue 35, bug 5: every var was exported to every task, so `--var X=1` reran every task. A task's
/// definition now holds only the vars it uses, and those under `export` (docs/pipeline.md, "Which
/// variables a task gets").
@Suite(.hangLimit(minutes: 2))
struct UnusedVariableTests {
    static let pipeline = """
        version: 1
        vars: {X: "0", Y: "0", Z: "0"}
        tasks:
          plain: {run: echo plain > plain.txt, outputs: [plain.txt]}
          templated: {run: "echo {{ X }} > templated.txt", outputs: [templated.txt]}
          shell: {run: "echo $X > shell.txt", outputs: [shell.txt]}
          braced: {run: "echo ${X:-none} > braced.txt", outputs: [braced.txt]}
          through-env: {env: {LEVEL: "{{ X }}"}, run: "echo $LEVEL > env.txt", outputs: [env.txt]}
          other: {run: "echo $Y > other.txt", outputs: [other.txt]}
        """

    @Test func aVarReachesAndRerunsOnlyTheTasksThatUseIt() async throws {
        let folder = try PipelineFolder(Self.pipeline, prefix: "jobgraph-vars")
        defer { folder.remove() }
        #expect(try await folder.run().status == 0)
        let changed = try await folder.run(["--var", "X=1"])
        #expect(changed.status == 0, "\(changed.outcome.standardError)")
        #expect(changed.executed == ["templated", "shell", "braced", "through-env"])
        #expect(changed.upToDate == ["plain", "other"])
        #expect(folder.directory.read("shell.txt") == "1\n")
        #expect(folder.directory.read("braced.txt") == "1\n")
        #expect(folder.directory.read("env.txt") == "1\n")
        // Dropping the `--var` reruns the same tasks again, and no other.
        #expect(try await folder.run().executed == ["templated", "shell", "braced", "through-env"])
    }

    @Test func anExportedVarReachesAndRerunsEveryTask() async throws {
        let folder = try PipelineFolder(
            Self.pipeline.replacingOccurrences(of: "tasks:\n", with: "export: [Z]\ntasks:\n")
                + "\n  reads-z: {run: \"printenv Z > z.txt\", outputs: [z.txt]}\n",
            prefix: "jobgraph-vars")
        defer { folder.remove() }
        #expect(try await folder.run().status == 0)
        #expect(folder.directory.read("z.txt") == "0\n")
        let changed = try await folder.run(["--var", "Z=1"])
        #expect(changed.upToDate.isEmpty)
        #expect(folder.directory.read("z.txt") == "1\n")
    }

    @Test func anUnknownExportIsAnErrorWithANearMatch() async throws {
        let folder = try PipelineFolder("version: 1\nvars: {LEVEL: \"1\"}\nexport: [LEVL]\ntasks:\n  a: {run: \"true\"}\n",
                                        prefix: "jobgraph-vars")
        defer { folder.remove() }
        let outcome = try await JobGraphBinary.run(["validate", "p.yaml"], in: folder.directory)
        #expect(outcome.status == 2)
        #expect(outcome.errorLines == ["p.yaml:3:10: error: unknown variable 'LEVL' in 'export'; did you mean 'LEVEL'?"])
    }
}
