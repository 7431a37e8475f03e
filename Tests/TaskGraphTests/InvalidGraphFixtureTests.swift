import Foundation
import JobGraphBasics
import JobGraphTestSupport
import Testing
import Reporters
import TaskGraph

/// Every `Tests/Fixtures/invalid/*.yaml` goes through the CLI's one entry point and must give exactly
/// the lines of its `.diagnostics` sibling, so loader and graph checks are proven together.
@Suite struct InvalidGraphFixtureTests {
    @Test(arguments: Fixtures.yamlFiles(in: "invalid"))
    func fixtureGivesExactlyItsDiagnostics(yamlFile: URL) throws {
        let name = yamlFile.deletingPathExtension().lastPathComponent
        let expectedFile = yamlFile.deletingPathExtension().appendingPathExtension("diagnostics")
        let bytes = [UInt8](try Data(contentsOf: yamlFile))
        let expected = try String(contentsOf: expectedFile, encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            .reversed().drop { $0.isEmpty }.reversed()

        var diagnostics = Diagnostics()
        let graph = PipelineCheck.graph(bytes, file: "invalid/\(name).yaml", diagnostics: &diagnostics)

        #expect(graph == nil)
        #expect(diagnostics.hasErrors)
        #expect(DiagnosticPrinter().render(diagnostics) == Array(expected))
    }

    @Test func thereAreInvalidFixtures() {
        #expect(Fixtures.yamlFiles(in: "invalid").count >= 2)
    }
}
