import Foundation
import JobGraphBasics
import JobGraphTestSupport
import PipelineModel
import Reporters
import Testing

/// Every `invalid/NAME.yaml` (except the `graph-` ones, which the task graph's tests check through
/// the full check) gives exactly the lines in `invalid/NAME.diagnostics`.
@Test(arguments: Fixtures.yamlFiles(in: "invalid").filter { !$0.lastPathComponent.hasPrefix("graph-") })
func invalidFixtureReportsExpectedDiagnostics(_ url: URL) throws {
    let bytes = [UInt8](try Data(contentsOf: url))
    let expectedURL = url.deletingPathExtension().appendingPathExtension("diagnostics")
    let expected = try String(contentsOf: expectedURL, encoding: .utf8)
    var diagnostics = Diagnostics()
    let pipeline = PipelineLoader.load(bytes, file: "invalid/\(url.lastPathComponent)", diagnostics: &diagnostics)
    let rendered = DiagnosticPrinter().render(diagnostics).joined(separator: "\n")
    #expect(rendered == expected.trimmingCharacters(in: .newlines))
    #expect(pipeline == nil)
}

@Test(arguments: Fixtures.yamlFiles(in: "valid"))
func validFixtureLoadsWithoutDiagnostics(_ url: URL) throws {
    var diagnostics = Diagnostics()
    let pipeline = PipelineLoader.load(contentsOf: url.path, diagnostics: &diagnostics)
    #expect(DiagnosticPrinter().render(diagnostics) == [])
    #expect(pipeline != nil)
}

@Test func everyInvalidFixtureHasExpectedDiagnostics() {
    for url in Fixtures.yamlFiles(in: "invalid") {
        let expected = url.deletingPathExtension().appendingPathExtension("diagnostics")
        #expect(FileManager.default.fileExists(atPath: expected.path), "missing \(expected.lastPathComponent)")
    }
}

@Test func manyMistakesAreAllReportedInOnePass() throws {
    let url = Fixtures.directory.appendingPathComponent("invalid/many-mistakes.yaml")
    var diagnostics = Diagnostics()
    _ = PipelineLoader.load(contentsOf: url.path, diagnostics: &diagnostics)
    #expect(diagnostics.errorCount >= 8)
}
