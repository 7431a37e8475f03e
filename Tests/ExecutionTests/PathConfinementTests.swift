import Foundation
import JobGraphBasics
import PipelineModel
import Testing
@testable import Execution

/// The one check behind every templated path, without a run: the cases a user meets, worded as the user
/// would read them.
@Suite struct PathConfinementTests {
    private static let place = SourceLocation(file: "p.yaml", line: 1, column: 1)

    /// `text` with `{{ item }}` as its one placeholder.
    private func template(_ text: String) -> Template {
        let parts = text.split(separator: "{{ item }}", omittingEmptySubsequences: false).map(String.init)
        var segments: [Template.Segment] = []
        for (index, part) in parts.enumerated() {
            if !part.isEmpty { segments.append(.literal(part)) }
            if index < parts.count - 1 { segments.append(.variable(path: ["item"], location: Self.place)) }
        }
        return Template(segments: segments, location: Self.place)
    }

    private func render(_ text: String, item: String, in base: String = "/p") -> Result<String, TemplateError> {
        let context = TemplateContext(variables: [:], item: .string(item), pipelineDirectory: "/p", workingDirectory: base)
        return Result(catching: { () throws(TemplateError) -> String in try template(text).rendered(in: context, as: .path(key: "output")) })
    }

    @Test(arguments: [
        ("{{ item }}.png", "x", "/p"), ("build/{{ item }}", "a/b", "/p"), (".{{ item }}.png", "x", "/p"),
        ("{{ item }}", ".", "/p"), ("../{{ item }}", "x", "/p/sub"), ("../shared/{{ item }}", "x", "/p"),
        ("/data/{{ item }}", "x/y", "/p"),
    ])
    func pathsThatStayAreRendered(text: String, item: String, base: String) throws {
        #expect(try render(text, item: item, in: base).get() == text.replacingOccurrences(of: "{{ item }}", with: item))
    }

    @Test func joiningThatClimbsOutIsRefusedNamingKeyPathAndFolder() {
        #expect(throws: TemplateError(message: "output '../x.png' (from '.{{ item }}.png') leads outside the pipeline's folder '/p'")) {
            try render(".{{ item }}.png", item: "./x").get()
        }
        #expect(throws: TemplateError(message: "output 'sub/..//../x' (from 'sub/.{{ item }}/../x') leads outside the pipeline's folder '/p'")) {
            try render("sub/.{{ item }}/../x", item: "./").get()
        }
    }

    @Test func aValueThatIsAbsoluteOrClimbsIsRefusedWhateverSurroundsIt() {
        #expect(throws: TemplateError(message: "output 'build//etc' (from 'build/{{ item }}'): the value '/etc' of {{ item }} "
            + "may not be an absolute path or contain '..'")) {
            try render("build/{{ item }}", item: "/etc").get()
        }
        #expect(throws: TemplateError(message: "output 'a/b/../c' (from 'a/{{ item }}'): the value 'b/../c' of {{ item }} "
            + "may not be an absolute path or contain '..'")) {
            try render("a/{{ item }}", item: "b/../c").get()
        }
    }

    @Test func literalTextElsewhereConfinesTheValueThere() {
        #expect(throws: TemplateError(message: "output '/data/../etc' (from '/data/.{{ item }}') leads outside '/data', where the file puts it")) {
            try render("/data/.{{ item }}", item: "./etc").get()
        }
    }

    @Test(arguments: [("/a/b/../c", "/a/c"), ("a/./b/", "a/b"), ("../x", "../x"), ("/../x", "/x"), (".", "."), ("a/..", ".")])
    func normalising(path: String, expected: String) {
        #expect(NormalPath(path).description == expected)
    }
}
