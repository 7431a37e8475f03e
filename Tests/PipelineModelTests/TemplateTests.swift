import JobGraphBasics
import PipelineModel
import Testing

/// A template written without placeholders keeps only its text; it must still look and compare like
/// the one-segment template it stands for.
@Suite struct TemplateTests {
    private let here = SourceLocation(file: "pipeline.yaml", line: 3, column: 7)

    @Test func aLiteralIsOneLiteralSegmentAndEqualsOne() {
        let literal = Template(literal: "touch out/a", location: here)
        let segmented = Template(segments: [.literal("touch out/a")], location: here)
        #expect(literal.segments == [.literal("touch out/a")])
        #expect(literal == segmented)
        #expect(Set([literal, segmented]).count == 1)
        #expect(literal.description == "touch out/a")
        #expect(literal.literalText == "touch out/a")
        #expect(segmented.literalText == nil)
        #expect(literal.isLiteral && literal.variableNames.isEmpty)
    }

    @Test func anEmptyLiteralHasNoSegments() {
        #expect(Template(literal: "", location: here).segments.isEmpty)
    }

    @Test func settingSegmentsReplacesTheText() {
        var template = Template(literal: "echo hi", location: here)
        template.segments = [.literal("echo "), .variable(path: ["name"], location: here)]
        #expect(template.literalText == nil)
        #expect(template.description == "echo {{ name }}")
        #expect(template.variableNames == ["name"])
    }
}
