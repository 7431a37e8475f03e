import Foundation
import JobGraphTestSupport
import Testing

/// A task needs, with no `needs` written, every task that writes a file it reads (docs/pipeline.md,
/// "Dependencies found from files"). Before, `consume` ran beside `make` and read files not yet written.
@Suite(.hangLimit(minutes: 1))
struct FileNeedsTests {
    static let pipeline = """
        version: 1
        tasks:
          consume:
            run: "cat data/a.txt data/b.txt > all.txt"
            inputs: ["data/*.txt"]
            outputs: [all.txt]
          make:
            foreach: [a, b]
            run: "mkdir -p data && echo {{ item }} > data/{{ item }}.txt"
            outputs: ["data/{{ item }}.txt"]
          report:
            run: "wc -l < all.txt > count.txt"
            inputs: [all.txt]
        """

    private func folder(_ yaml: String = Self.pipeline) throws -> ScratchDirectory {
        let directory = try ScratchDirectory("jobgraph-file-needs")
        try directory.write(yaml, to: "p.yaml")
        return directory
    }

    private func transitions(_ running: RunningJobGraph, in file: String) -> [String] {
        running.events(in: file).compactMap { event in
            guard let task = event["task"] as? String, let to = event["to"] as? String else { return nil }
            return "\(task) \(to)"
        }
    }

    @Test func aTaskWaitsForTheTasksThatWriteItsInputs() async throws {
        let directory = try folder()
        defer { directory.remove() }
        let running = try JobGraphBinary.start(["run", "p.yaml", "--jobs", "4", "--events", "e.jsonl"], in: directory)
        let outcome = try await running.finish()
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(directory.read("all.txt") == "a\nb\n")
        #expect(directory.read("count.txt")?.trimmingCharacters(in: .whitespacesAndNewlines) == "2")
        let moments = transitions(running, in: "e.jsonl")
        let consumeStarted = try #require(moments.firstIndex(of: "consume executing"))
        for writer in ["make[a] succeeded", "make[b] succeeded"] {
            #expect(try #require(moments.firstIndex(of: writer)) < consumeStarted, "\(moments)")
        }
    }

    @Test func namingAReaderRunsItsWritersAndAFailedWriterSkipsIt() async throws {
        let directory = try folder(Self.pipeline.replacingOccurrences(of: "echo {{ item }} > data", with: "test {{ item }} = a && echo {{ item }} > data"))
        defer { directory.remove() }
        let running = try JobGraphBinary.start(["run", "p.yaml", "report", "--keep-going", "--events", "e.jsonl"], in: directory)
        let outcome = try await running.finish()
        #expect(outcome.status == 1)
        let states = RunResult.finalStates(in: running.events(in: "e.jsonl"))
        #expect(states == ["make[a]": "succeeded", "make[b]": "failed", "consume": "skipped", "report": "skipped"])
    }

    @Test func aCycleThroughFilesIsAnErrorAtTheInputAndTheOutput() async throws {
        let directory = try folder("""
            version: 1
            tasks:
              a: {run: "cat y > x", inputs: [y], outputs: [x]}
              b: {run: "cat x > y", inputs: [x], outputs: [y]}
              same: {run: "touch s", inputs: [s], outputs: [s]}
            """)
        defer { directory.remove() }
        let outcome = try await JobGraphBinary.run(["validate", "p.yaml"], in: directory)
        #expect(outcome.status == 2)
        #expect(outcome.standardError.contains("p.yaml:4:34: error: dependency cycle: a -> b -> a"), "\(outcome.standardError)")
        #expect(outcome.standardError.contains("p.yaml:3:34: note: 'a' needs 'b': it reads 'y' here"), "\(outcome.standardError)")
        #expect(outcome.standardError.contains("p.yaml:4:48: note: which 'b' writes here"), "\(outcome.standardError)")
        #expect(!outcome.standardError.contains("'same'"), "a task that reads what it writes does not need itself")
    }

    @Test func validateWarnsWhereAnInputGlobAndAnOutputGlobMayOverlap() async throws {
        let directory = try folder("""
            version: 1
            tasks:
              unpack: {run: "mkdir -p src && touch src/a.c", outputs: ["src/**"]}
              build: {run: "cat src/*.c > all.c", inputs: ["src/*.c"], outputs: [all.c]}
            """)
        defer { directory.remove() }
        let outcome = try await JobGraphBinary.run(["validate", "p.yaml"], in: directory)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardError.contains(
            "p.yaml:4:48: warning: input glob 'src/*.c' may name files that the output glob 'src/**' declares"), "\(outcome.standardError)")
        #expect(outcome.standardError.contains("p.yaml:3:60: note: the output glob is declared here"), "\(outcome.standardError)")
    }

    @Test func validateWarnsWhereTwoTasksThatMayRunAtOnceWriteOneFile() async throws {
        let directory = try folder("""
            version: 1
            tasks:
              binary: {run: "echo a > app", outputs: [app]}
              cross: {foreach: [amd64, arm64], run: "echo b > app", outputs: [app]}
              patch: {needs: [binary], run: "echo c >> app", outputs: [app]}
            """)
        defer { directory.remove() }
        let outcome = try await JobGraphBinary.run(["validate", "p.yaml"], in: directory)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let warnings = outcome.standardError.split(separator: "\n").filter { $0.contains("warning:") }
        // `binary` against the fan-out's items, and the items against each other; `patch` runs after
        // `binary`, and is not told, but it may run beside the fan-out.
        #expect(warnings.count == 3, "\(outcome.standardError)")
        #expect(outcome.standardError.contains(
            "p.yaml:4:67: warning: 'cross[amd64]' and 'binary' both declare they write 'app', and neither needs the other"),
                "\(outcome.standardError)")
        #expect(outcome.standardError.contains("p.yaml:3:43: note: 'binary' declares it here"), "\(outcome.standardError)")
        #expect(outcome.standardError.contains("warning: 'cross[arm64]' and 'cross[amd64]' both declare they write 'app'"), "\(outcome.standardError)")
        #expect(outcome.standardError.contains("warning: 'patch' and 'cross[amd64]' both declare"), "\(outcome.standardError)")
        #expect(!outcome.standardError.contains("'patch' and 'binary'"), "\(outcome.standardError)")
    }

    /// A path that names an `sh:` variable is known only to a run, which says what `validate` cannot.
    @Test func aRunWarnsOfTwoTasksWritingOneFileWhereOnlyItKnowsThePath() async throws {
        let directory = try folder("""
            version: 1
            vars:
              ARCH: {sh: echo amd64}
            tasks:
              binary: {run: "echo a > app-{{ ARCH }}", outputs: ["app-{{ ARCH }}"]}
              cross: {foreach: [amd64, arm64], run: "echo b > app-{{ item }}", outputs: ["app-{{ item }}"]}
            """)
        defer { directory.remove() }
        let validated = try await JobGraphBinary.run(["validate", "p.yaml"], in: directory)
        #expect(validated.status == 0 && !validated.standardError.contains("warning"), "\(validated.standardError)")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--progress", "plain"], in: directory)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardError.contains(
            "p.yaml:6:78: warning: 'cross[amd64]' and 'binary' both declare they write 'app-amd64', and neither needs the other"),
                "\(outcome.standardError)")
        #expect(outcome.errorLines.filter { $0.contains("warning:") }.count == 1, "\(outcome.standardError)")
    }

    @Test func explainGraphAndTheDryRunSayWhichNeedsCameFromFiles() async throws {
        let directory = try folder()
        defer { directory.remove() }
        let explain = try await JobGraphBinary.run(["explain", "p.yaml", "consume"], in: directory)
        #expect(explain.status == 0, "\(explain.standardError)")
        #expect(explain.standardOutput.contains("  make[a] (needed: it writes 'data/a.txt'): runs because"), "\(explain.standardOutput)")

        let dot = try await JobGraphBinary.run(["graph", "p.yaml"], in: directory)
        #expect(dot.standardOutput.contains(#""make[b]" -> "consume" [style=dashed];"#), "\(dot.standardOutput)")
        let mermaid = try await JobGraphBinary.run(["graph", "p.yaml", "--format", "mermaid"], in: directory)
        #expect(mermaid.standardOutput.contains("n1 -.-> n0"), "\(mermaid.standardOutput)")

        let json = try await JobGraphBinary.run(["graph", "p.yaml", "--format", "json"], in: directory)
        let graph = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let edges = try #require(graph["edges"] as? [[String: Any]])
        #expect(edges.contains { $0["from"] as? String == "make[a]" && $0["to"] as? String == "consume" && $0["inferred"] as? Bool == true })

        let plan = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run", "--json"], in: directory)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(plan.standardOutput.utf8)) as? [String: Any])
        let tasks = try #require(document["tasks"] as? [[String: Any]])
        let consume = try #require(tasks.first { $0["task"] as? String == "consume" })
        #expect(consume["inferred_needs"] as? [String] == ["make[a]", "make[b]"])
    }
}
