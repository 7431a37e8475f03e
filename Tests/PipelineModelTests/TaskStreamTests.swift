import JobGraphBasics
import PipelineModel
import Testing

/// Tasks are decoded while the file is read; whatever the order of the top-level keys, the result must
/// be what reading the file as a whole gives.
@Suite struct TaskStreamTests {
    @Test func varsWrittenAfterTasksStillDefineTheirPlaceholders() {
        let loaded = load("version: 1\ntasks:\n  a: {run: 'echo {{ greeting }}'}\nvars:\n  greeting: hi\n")
        #expect(loaded.lines == [])
        #expect(loaded.task("a")?.action.commandTexts == ["echo {{ greeting }}"])
    }

    @Test func defaultsWrittenAfterTasksStillApply() {
        let loaded = load("version: 1\ntasks:\n  a: {run: make}\n  b: {run: test}\ndefaults:\n  retries: 3\n")
        #expect(loaded.lines == [])
        #expect(loaded.pipeline?.tasks.map(\.retries) == [3, 3])
    }

    @Test func unknownVariableIsReportedOnceWhenVarsComeFirst() {
        let loaded = load("version: 1\nvars:\n  greeting: hi\ntasks:\n  a: {run: 'echo {{ greting }}'}\n")
        #expect(loaded.lines == ["pipeline.yaml:5:18: error: unknown variable 'greting' in template; did you mean 'greeting'?"])
    }

    @Test func duplicateTaskIsTheYAMLErrorAlone() {
        // A streamed duplicate makes the loader read the file whole, where YAML reports it and stops.
        let loaded = load("version: 1\ntasks:\n  a: {run: make, priority: urgent}\n  a: {run: test}\n")
        #expect(loaded.lines == ["pipeline.yaml:4:3: error: duplicate key 'a' (first at line 3, column 3)"])
    }

    @Test func tasksBroughtInByAMergeKeyAreKept() {
        let loaded = load("version: 1\ntasks:\n  <<: {setup: {run: make}}\n  build: {run: test, needs: [setup]}\n")
        #expect(loaded.lines == [])
        #expect(loaded.pipeline?.tasks.map(\.id.rawValue) == ["build", "setup"])
    }

    @Test func everyTaskOfAStreamedFileIsDecodedInOrder() {
        var yaml = "version: 1\nvars: {n: '1'}\ndefaults: {retries: 1}\ntasks:\n"
        for index in 0..<50 { yaml += "  t\(index): {run: 'echo {{ n }}', needs: [\(index == 0 ? "" : "t\(index - 1)")]}\n" }
        yaml += "name: chain\n"
        let loaded = load(yaml)
        #expect(loaded.lines == [])
        #expect(loaded.pipeline?.tasks.map(\.id.rawValue) == (0..<50).map { "t\($0)" })
        #expect(loaded.pipeline?.tasks.allSatisfy { $0.retries == 1 } == true)
        #expect(loaded.pipeline?.name == "chain")
    }
}

extension Action {
    /// The commands of a `run`, as written.
    fileprivate var commandTexts: [String] {
        if case .run(let commands) = self { return commands.map(\.description) }
        return []
    }
}
