import PipelineModel
import Testing

/// The top-level `output:` key.
@Suite struct OutputModeDecodingTests {
    @Test(arguments: OutputMode.allCases)
    func eachModeIsRead(mode: OutputMode) {
        let loaded = load("version: 1\noutput: \(mode.rawValue)\ntasks:\n  a: {run: echo}\n")
        #expect(loaded.lines == [])
        #expect(loaded.pipeline?.output == mode)
    }

    @Test func absentOrNullLeavesTheChoiceToTheCommandLine() {
        #expect(load("version: 1\ntasks:\n  a: {run: echo}\n").pipeline?.output == nil)
        let null = load("version: 1\noutput:\ntasks:\n  a: {run: echo}\n")
        #expect(null.lines == [])
        #expect(null.pipeline != nil && null.pipeline?.output == nil)
    }

    @Test func aWrongShapeListsTheModes() {
        let loaded = load("version: 1\noutput: [grouped]\ntasks:\n  a: {run: echo}\n")
        #expect(loaded.lines == [
            "pipeline.yaml:2:9: error: expected one of 'prefixed', 'grouped' or 'interleaved' for 'output', found a list",
        ])
    }
}
