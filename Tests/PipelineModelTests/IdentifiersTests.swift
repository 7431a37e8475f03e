import PipelineModel
import Testing

/// `TaskID.syntax(of:)`: `:` only joins an include's name to an id (docs/pipeline.md, "Includes").
@Suite struct IdentifiersTests {
    @Test(arguments: ["build", "a.b-c_d", "x1"])
    func aFileMayDeclarePlainIDs(_ id: String) {
        #expect(TaskID.syntax(of: id) == .plain)
        #expect(TaskID.isValid(id))
    }

    @Test(arguments: ["web:build", "web:sub:x", "a.b:c-d"])
    func anIncludedTasksIDIsNamespaced(_ id: String) {
        #expect(TaskID.syntax(of: id) == .namespaced)
        #expect(TaskID.isValid(id))
    }

    @Test(arguments: ["", ":build", "web:", "web::build", "make docs", "a:b c", "é"])
    func otherTextIsNoID(_ id: String) {
        #expect(TaskID.syntax(of: id) == .invalid)
        #expect(!TaskID.isValid(id))
    }

    @Test func namespacingPrefixesTheIncludesName() {
        #expect(TaskID("build").namespaced(in: "web") == "web:build")
        #expect(TaskID("sub:x").namespaced(in: "web") == "web:sub:x")
    }
}
