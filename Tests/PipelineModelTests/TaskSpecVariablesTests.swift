import JobGraphBasics
import PipelineModel
import Testing

/// Which names a task reads (docs/pipeline.md, "Which variables a task gets"): what decides which vars
/// its environment and definition hold.
@Suite struct TaskSpecVariablesTests {
    @Test func templatesShellTextEnvValuesHooksAndConditionsAreRead() throws {
        let loaded = loadTask("""
            run: ["echo {{ A }} $B ${C:-x} $$ $1 \\\\$", "cp {{ item }} out"]
            foreach: [one]
            env: {PATH_TOO: "$D:{{ E }}"}
            cwd: "{{ F }}"
            conditions: [{env: G}, {command: "test -n \\"$H\\""}]
            on_failure: echo $I
            """, vars: "A: a\nE: e\nF: f")
        let task = try #require(loaded.task("job"), "\(loaded.lines)")
        #expect(task.referencedNames == ["A", "B", "C", "F", "D", "E", "G", "H", "I"])
    }

    @Test func aTaskWithoutDollarsOrPlaceholdersReadsNothing() throws {
        let task = try #require(loadTask("run: touch out/a\noutputs: [out/a]").task("job"))
        #expect(task.referencedNames.isEmpty)
    }
}
