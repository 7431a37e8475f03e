import Foundation
import JobGraphTestSupport
import Testing

/// The reference in `docs/` keeps up with the code: every key of the pipeline schema, every option that a
/// command's `--help` prints and every field of the event schema is named in its page, in backticks.
@Suite(.hangLimit(minutes: 1))
struct DocsTests {
    static let root = Fixtures.repositoryRoot

    @Test func everyKeyOfThePipelineSchemaIsInPipelineDocs() throws {
        let keys = try Self.propertyNames(inSchema: "schemas/pipeline.schema.json")
        #expect(keys.count > 20, "too few keys read from the schema: \(keys.sorted())")
        let page = try Self.page("docs/pipeline.md")
        let missing = keys.filter { !page.contains("`\($0)`") && !page.contains("`\($0):") }.sorted()
        #expect(missing.isEmpty, "docs/pipeline.md does not name these keys of schemas/pipeline.schema.json: \(missing)")
    }

    @Test func everyFieldAndKindOfTheEventSchemaIsInEventsDocs() throws {
        let fields = try Self.propertyNames(inSchema: "schemas/events.schema.json")
        let schema = try Self.json("schemas/events.schema.json")
        let kinds = ((schema["properties"] as? [String: Any])?["event"] as? [String: Any])?["enum"] as? [String] ?? []
        #expect(kinds.count >= 4, "no event kinds read from the schema")
        let page = try Self.page("docs/events.md")
        let missing = (fields.union(kinds)).filter { !page.contains("`\($0)`") }.sorted()
        #expect(missing.isEmpty, "docs/events.md does not name these fields or kinds of schemas/events.schema.json: \(missing)")
    }

    @Test func everyCommandAndOptionThatHelpPrintsIsInCLIDocs() async throws {
        let directory = try ScratchDirectory("jobgraph-docs")
        defer { directory.remove() }
        let rootHelp = try await JobGraphBinary.run(["--help"], in: directory)
        #expect(rootHelp.status == 0)
        let commands = Self.subcommands(inHelp: rootHelp.standardOutput)
        #expect(commands.contains("run") && commands.contains("report"), "subcommands read from --help: \(commands)")
        let page = try Self.page("docs/cli.md")
        var missing: [String] = []
        for option in Self.options(inHelp: rootHelp.standardOutput) where !page.contains("`\(option)") {
            missing.append("jobgraph \(option)")
        }
        for command in commands {
            if !page.contains("`jobgraph \(command)") { missing.append("jobgraph \(command)") }
            let help = try await JobGraphBinary.run([command, "--help"], in: directory)
            #expect(help.status == 0, "jobgraph \(command) --help")
            for option in Self.options(inHelp: help.standardOutput) where !page.contains("`\(option)") {
                missing.append("jobgraph \(command) \(option)")
            }
        }
        #expect(missing.isEmpty, "docs/cli.md does not name these commands or options that --help prints: \(missing)")
    }

    @Test func theReadmeLinksTheDocsAndNothingOutsideTheRepository() throws {
        let readme = try Self.page("README.md")
        for page in ["docs/pipeline.md", "docs/cli.md", "docs/events.md", "docs/state.md", "docs/coming-from.md"] {
            #expect(readme.contains("(\(page))"), "README.md does not link \(page)")
        }
        // Markdown links to relative targets must stay inside the repository and exist.
        let targets = readme.matches(of: /\]\(([^)#\s]+)/).map { String($0.output.1) }.filter { !$0.contains("://") }
        for target in targets {
            #expect(!target.hasPrefix("..") && !target.hasPrefix("/"), "README.md links outside the repository: \(target)")
            #expect(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(target).path), "README.md links a missing file: \(target)")
        }
    }

    // MARK: - Reading

    static func page(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    static func json(_ path: String) throws -> [String: Any] {
        let data = try Data(contentsOf: root.appendingPathComponent(path))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// Every name under a `properties` object anywhere in the schema.
    static func propertyNames(inSchema path: String) throws -> Set<String> {
        var names: Set<String> = []
        func walk(_ value: Any) {
            if let object = value as? [String: Any] {
                for (key, child) in object {
                    if key == "properties", let properties = child as? [String: Any] { names.formUnion(properties.keys) }
                    walk(child)
                }
            } else if let array = value as? [Any] {
                array.forEach(walk)
            }
        }
        walk(try json(path))
        return names
    }

    /// The names listed under `SUBCOMMANDS:` in the root's help, without the default marker.
    static func subcommands(inHelp help: String) -> [String] {
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("SUBCOMMANDS:") }) else { return [] }
        var names: [String] = []
        for line in lines[(start + 1)...] {
            guard line.hasPrefix("  ") else { break }
            if line.hasPrefix("   ") { continue }  // a wrapped description
            if let name = line.split(separator: " ").first, name != "help" { names.append(String(name)) }
        }
        return names
    }

    /// Every `--long` option and `-x` short option that the help lists, `--help` and `-h` aside (every
    /// command has them; docs/cli.md says so once).
    static func options(inHelp help: String) -> Set<String> {
        var options: Set<String> = []
        for line in help.split(separator: "\n") where line.hasPrefix("  -") {
            // The names, before the gap that starts the description.
            let names = line.dropFirst(2).components(separatedBy: "  ").first ?? ""
            for match in names.matches(of: /(?:^|[\s,])(--?[a-zA-Z][a-zA-Z0-9-]*)/) {
                let option = String(match.output.1)
                if option != "--help" && option != "-h" { options.insert(option) }
            }
        }
        return options
    }
}
