import Foundation
#if canImport(Glibc)
import Glibc
#endif
import JobGraphBasics
import JobGraphTestSupport
import PipelineModel
import Testing

@Suite struct PipelineLoaderTests {
    @Test func missingFileIsOneDiagnosticWithoutLocation() {
        var diagnostics = Diagnostics()
        let pipeline = PipelineLoader.load(contentsOf: "no-such-dir/x.yaml", diagnostics: &diagnostics)
        #expect(pipeline == nil)
        #expect(diagnostics.all.map(\.message) == ["cannot read 'no-such-dir/x.yaml': No such file or directory"])
        #expect(diagnostics.all.first?.location == nil)
    }

    @Test func directoryIsReportedAsUnreadable() {
        var diagnostics = Diagnostics()
        let pipeline = PipelineLoader.load(contentsOf: NSTemporaryDirectory(), diagnostics: &diagnostics)
        #expect(pipeline == nil)
        #expect(diagnostics.all.map(\.message) == ["cannot read '\(NSTemporaryDirectory())': Is a directory"])
    }

    @Test func fileOnDiskIsNamedAsTyped() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loader-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }   // best effort: a leftover temp dir is harmless
        let path = directory.appendingPathComponent("jobs.yaml").path
        try "version: 1\ntasks:\n  build: {run: make, priorty: high}\n".write(toFile: path, atomically: true, encoding: .utf8)
        var diagnostics = Diagnostics()
        _ = PipelineLoader.load(contentsOf: path, diagnostics: &diagnostics)
        #expect(diagnostics.all.map(\.location) == [SourceLocation(file: path, line: 3, column: 22)])
    }

    @Test func pipelineIsReturnedDespiteErrorsFromEarlierLoads() {
        var diagnostics = Diagnostics()
        diagnostics.error("an earlier problem", at: nil)
        let pipeline = PipelineLoader.load(yaml: "version: 1\ntasks:\n  build: {run: make}\n", diagnostics: &diagnostics)
        #expect(pipeline?.tasks.map(\.id) == ["build"])
        #expect(diagnostics.errorCount == 1)
    }

    @Test func yamlErrorStopsBeforeDecoding() {
        let loaded = load("version: 1\ntasks:\n  build: {run: make\n")
        #expect(loaded.pipeline == nil)
        #expect(loaded.messages.count == 1)
        #expect(loaded.messages.first?.hasPrefix("YAML syntax error") == true)
    }

    @Test func bytesWithByteOrderMarkKeepColumns() {
        var diagnostics = Diagnostics()
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("version: 1\ntasks:\n  a: {run: 'echo {{ nope }}'}\n".utf8)
        _ = PipelineLoader.load(bytes, file: "bom.yaml", diagnostics: &diagnostics)
        #expect(diagnostics.all.map(\.location) == [SourceLocation(file: "bom.yaml", line: 3, column: 18)])
    }

    /// A large generated file loads whole, with defaults and needs on every task. (Its speed is measured
    /// by `Benchmarks/validate.sh`, not here.)
    @Test func aLargeFileLoadsEveryTask() {
        var yaml = "version: 1\nvars:\n  out: build\ndefaults:\n  retries: 1\ntasks:\n"
        let count = 20_000
        yaml.reserveCapacity(count * 60)
        for index in 0..<count {
            yaml += "  t\(index):\n    run: echo {{ out }}/\(index)\n"
            if index > 0 { yaml += "    needs: [t\(index - 1)]\n" }
        }
        let loaded = load(yaml)
        #expect(loaded.pipeline?.tasks.count == count)
        #expect(loaded.pipeline?.tasks.last?.retries == 1)
        #expect(loaded.pipeline?.tasks.last?.needs.map(\.value.rawValue) == ["t\(count - 2)"])
    }
}
