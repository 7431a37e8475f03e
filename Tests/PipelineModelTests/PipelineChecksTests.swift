import JobGraphBasics
import PipelineModel
import Testing

@Suite struct PipelineChecksTests {
    @Test func queueMustBeDeclared() {
        let none = load("version: 1\ntasks:\n  a: {run: echo, queue: network}\n")
        #expect(none.lines == ["pipeline.yaml:3:25: error: unknown queue 'network'; declare it under 'queues'"])

        let far = load("version: 1\nqueues: {cpu: {}, io: {}}\ntasks:\n  a: {run: echo, queue: network}\n")
        #expect(far.messages == ["unknown queue 'network'; declare it under 'queues' or use 'cpu' or 'io'"])
    }

    @Test func declaredQueueIsAccepted() throws {
        let loaded = load("version: 1\nqueues: {network: {}}\ntasks:\n  a: {run: echo, queue: network}\n")
        #expect(loaded.lines == [])
        #expect(loaded.task("a")?.queue?.location == SourceLocation(file: "pipeline.yaml", line: 4, column: 25))
    }

    @Test func needsMustNameATaskInTheFile() {
        let loaded = load("version: 1\ntasks:\n  build: {run: make}\n  test: {run: make test, needs: [biuld, deploy]}\n")
        #expect(loaded.lines == [
            "pipeline.yaml:4:34: error: unknown task 'biuld' in 'needs'; did you mean 'build'?",
            "pipeline.yaml:4:41: error: unknown task 'deploy' in 'needs'; no task has that id",
        ])
    }

    @Test func taskMayNotNeedItself() {
        let loaded = load("version: 1\ntasks:\n  build: {run: make, needs: build}\n")
        #expect(loaded.lines == ["pipeline.yaml:3:29: error: task 'build' needs itself; remove it from its 'needs'"])
    }

    @Test func aTaskWithMistakesIsStillAKnownTarget() {
        // `b` has no action, and `c` has a bad id; needing them is not a second mistake.
        let loaded = load("version: 1\ntasks:\n  a: {run: echo, needs: [b, 'c d']}\n  b: {}\n  c d: {run: echo}\n")
        #expect(loaded.messages == [
            "task 'b' has no action; give it one of 'run', 'parallel', 'download' or 'filter', or 'needs' to make it a group of tasks",
            "invalid task id 'c d'; use letters, digits, '-', '_' and '.', with ':' between parts",
        ])
    }

    @Test func needsOfATaskWithOtherMistakesAreStillChecked() {
        let loaded = load("version: 1\ntasks:\n  a: {run: echo, priority: urgent, needs: [zzz]}\n")
        #expect(loaded.messages == [
            "unknown priority 'urgent'; expected 'very-low', 'low', 'normal', 'high' or 'very-high'",
            "unknown task 'zzz' in 'needs'; no task has that id",
        ])
    }

    @Test func needingAForeachTaskIsAllowed() {
        let loaded = load("version: 1\ntasks:\n  fan: {foreach: [a, b], run: echo}\n  join: {run: echo, needs: [fan]}\n")
        #expect(loaded.lines == [])
    }
}
