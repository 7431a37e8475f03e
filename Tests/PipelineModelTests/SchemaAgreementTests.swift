import Foundation
import JobGraphBasics
import JobGraphTestSupport
@testable import PipelineModel
import Reporters
import Testing
import YAMLNodes

/// `schemas/pipeline.schema.json` and `PipelineLoader` must judge pipeline files alike: an editor
/// that marks a file as fine while `jobgraph validate` rejects it (or the other way round) misleads.
///
/// The schema is checked by Python's `jsonschema` against what OUR YAML loader read, converted to
/// JSON, so both sides see the same values (YAML 1.2: `off` is a string here, unlike in PyYAML).
@Suite struct SchemaAgreementTests {
    /// Invalid fixtures whose mistake is one of shape (unknown key, bad enum value, wrong type,
    /// missing key), which the schema can see. Mistakes only the loader can find (an unknown need,
    /// a cycle, an unknown variable) are left out on purpose.
    static let schemaRejectedFixtures = [
        "allow-failure-yes.yaml",
        "cache-env-name.yaml",
        "remote-cache-url.yaml",
        "invalid-timeout.yaml",
        "unknown-effect.yaml",
        "unknown-priority.yaml",
        "unknown-qos.yaml",
        "slurm-unknown-key.yaml",
        "slurm-run-key-in-task.yaml",
        "unknown-executor.yaml",
        "invalid-task-id.yaml",
        "unknown-when.yaml",
        "condition-two-keys.yaml",
        "missing-download-to.yaml",
        "missing-version.yaml",
        "no-action.yaml",
        "empty-tasks.yaml",
        "missing-tasks.yaml",
        "quality-out-of-range.yaml",
        "reachable-no-port.yaml",
        "retries-not-integer.yaml",
        "invalid-sha256.yaml",
        "two-actions.yaml",
        "unterminated-template.yaml",
        "unknown-task-key.yaml",
        "unknown-top-level-key.yaml",
        "unsupported-version.yaml",
        "root-not-mapping.yaml",
        "tasks-as-list.yaml",
        "negative-retries.yaml",
        "zero-max-concurrent.yaml",
        "zero-width.yaml",
        "intensity-out-of-range.yaml",
        "unknown-download-key.yaml",
        "unknown-filter-key.yaml",
        "unknown-service-key.yaml",
        "needs-mapping.yaml",
        "env-mapping-value.yaml",
        "var-list-value.yaml",
        "hook-list.yaml",
        "empty-foreach.yaml",
        "unknown-output-mode.yaml",
        "unknown-platform.yaml",
        "retry-on-unknown-cause.yaml",
        "retry-on-exit-code-range.yaml",
        "retry-scale-too-large.yaml",
        "retry-scale-unknown-key.yaml",
    ]

    /// Every key the decoder takes is in the schema, so the schema (and through `DocsTests`,
    /// docs/pipeline.md) names each new key: `include`, `aliases`, `internal`, `platforms` ….
    @Test func everyKeyTheDecoderTakesIsInTheSchema() throws {
        let data = try Data(contentsOf: Fixtures.repositoryRoot.appendingPathComponent("schemas/pipeline.schema.json"))
        let schema = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        func properties(_ object: [String: Any]?) -> Set<String> { Set((object?["properties"] as? [String: Any])?.keys ?? [:].keys) }
        let definitions = schema["$defs"] as? [String: Any]
        let include = ((definitions?["include"] as? [String: Any])?["oneOf"] as? [Any])?.compactMap { $0 as? [String: Any] }.last
        let expectations: [(keys: [String], schema: Set<String>, what: String)] = [
            (Pipeline.keys.ordered, properties(schema), "the top level"),
            (TaskSpec.keys.ordered, properties(definitions?["task"] as? [String: Any]), "a task"),
            (Include.keys.ordered, properties(include), "an include"),
        ]
        for expectation in expectations {
            let missing = expectation.keys.filter { !expectation.schema.contains($0) }
            #expect(missing.isEmpty, "schemas/pipeline.schema.json lacks these keys of \(expectation.what): \(missing)")
        }
    }

    @Test func validFixturesAndExamplesAreSchemaValidAndLoad() async throws {
        let files = Self.files(in: Fixtures.directory.appendingPathComponent("valid"), prefix: "valid")
            + Self.files(in: Fixtures.repositoryRoot.appendingPathComponent("examples"), prefix: "examples")
            + Self.portFiles()
        #expect(files.contains { $0.name.hasPrefix("examples/") }, "no examples/*.yaml found")
        #expect(files.filter { $0.name.hasPrefix("examples/ports/") }.count == 4, "not the 4 files of examples/ports/")
        #expect(files.contains { $0.name.hasPrefix("valid/") }, "no Tests/Fixtures/valid/*.yaml found")

        let verdicts = try await SchemaCheck.verdicts(for: files)
        for file in files {
            let verdict = try #require(verdicts[file.name], "the schema check said nothing about \(file.name)")
            #expect(verdict.valid, "\(file.name) breaks the schema:\n\(verdict.errors.joined(separator: "\n"))")

            var diagnostics = Diagnostics()
            let pipeline = PipelineLoader.load(contentsOf: file.url.path, diagnostics: &diagnostics)
            #expect(pipeline != nil && !diagnostics.hasErrors,
                    "\(file.name) does not load:\n\(DiagnosticPrinter().render(diagnostics).joined(separator: "\n"))")
        }
    }

    @Test func shapeMistakesAreRejectedBySchemaAndLoader() async throws {
        let folder = Fixtures.directory.appendingPathComponent("invalid")
        let files = Self.schemaRejectedFixtures.map { name in
            (name: "invalid/\(name)", url: folder.appendingPathComponent(name))
        }
        for file in files {
            #expect(FileManager.default.fileExists(atPath: file.url.path), "\(file.name) is listed but missing")
        }

        let verdicts = try await SchemaCheck.verdicts(for: files.filter { FileManager.default.fileExists(atPath: $0.url.path) })
        for file in files where FileManager.default.fileExists(atPath: file.url.path) {
            let verdict = try #require(verdicts[file.name], "the schema check said nothing about \(file.name)")
            #expect(!verdict.valid, "the schema accepts \(file.name), which jobgraph rejects")

            var diagnostics = Diagnostics()
            let pipeline = PipelineLoader.load(contentsOf: file.url.path, diagnostics: &diagnostics)
            #expect(pipeline == nil && diagnostics.hasErrors, "the loader accepts \(file.name), which the schema rejects")
        }
    }

    /// The ported task files of `examples/ports/`, the included ones among them.
    private static func portFiles() -> [(name: String, url: URL)] {
        let root = Fixtures.repositoryRoot.appendingPathComponent("examples/ports")
        let names = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
        return names.filter { $0.hasSuffix(".yaml") }.sorted().map { name in
            (name: "examples/ports/\(name)", url: root.appendingPathComponent(name))
        }
    }

    /// The `.yaml` files of `folder`, named `prefix/file.yaml`, sorted.
    private static func files(in folder: URL, prefix: String) -> [(name: String, url: URL)] {
        // A missing folder yields no files, which the caller's expectations then report.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".yaml") }.sorted().map { name in
            (name: "\(prefix)/\(name)", url: folder.appendingPathComponent(name))
        }
    }
}

/// What `Tests/schema/validate.py` said about one document.
private struct SchemaVerdict: Decodable {
    var name: String
    var valid: Bool
    var errors: [String]
}

/// Why the schema check could not give verdicts; thrown so the test fails with this text.
private struct SchemaCheckFailure: Error, CustomStringConvertible {
    var description: String
}

/// Runs `Tests/schema/validate.py` once for a batch of pipeline files.
private enum SchemaCheck {
    static let schema = Fixtures.repositoryRoot.appendingPathComponent("schemas/pipeline.schema.json")
    static let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/schema/validate.py")

    /// Loads each file with `YAMLLoader`, sends all of them to one `python3` and returns its verdicts by name.
    static func verdicts(for files: [(name: String, url: URL)]) async throws -> [String: SchemaVerdict] {
        var batch: [String] = []
        for file in files {
            var diagnostics = Diagnostics()
            let bytes = try [UInt8](Data(contentsOf: file.url))
            guard let root = YAMLLoader.load(bytes, file: file.name, diagnostics: &diagnostics) else {
                let rendered = DiagnosticPrinter().render(diagnostics).joined(separator: "\n")
                throw SchemaCheckFailure(description: "\(file.name) is not loadable YAML:\n\(rendered)")
            }
            batch.append("{\"name\":\(YAMLNode.jsonString(file.name)),\"document\":\(root.jsonText)}")
        }
        let output = try await runValidator(input: "[" + batch.joined(separator: ",\n") + "]")

        var verdicts: [String: SchemaVerdict] = [:]
        for line in output.split(separator: "\n") {
            let verdict = try JSONDecoder().decode(SchemaVerdict.self, from: Data(line.utf8))
            verdicts[verdict.name] = verdict
        }
        return verdicts
    }

    /// Runs the validator with `input` on standard input (a file); returns its standard output.
    private static func runValidator(input: String) async throws -> String {
        let directory = try ScratchDirectory("jobgraph-schema")
        defer { directory.remove() }  // left-over files in the temporary directory are harmless
        try directory.write(input, to: "documents.json")
        let result = await ExternalProgram.run("/usr/bin/env", ["python3", script.path, schema.path],
                                               input: directory.file("documents.json"))
        switch result.status {
        case 0:
            return result.output
        case 3:
            throw SchemaCheckFailure(description: """
                the schema check needs the Python package 'jsonschema': run `pip install jsonschema` \
                (CI installs it)\n\(result.errorOutput)
                """)
        case 127:
            throw SchemaCheckFailure(description: "python3 is not installed; the schema check needs it\n\(result.errorOutput)")
        case let status:
            throw SchemaCheckFailure(description: "Tests/schema/validate.py exited with status \(status):\n\(result.errorOutput)")
        }
    }
}
