import Foundation
import JobGraphTestSupport
import Testing

/// `include:` through the binary (docs/pipeline.md, "Includes"): go-task's Taskfile includes its website's,
/// whose tasks run in the website's folder and show everywhere as `website:build`.
@Suite(.hangLimit(minutes: 1))
struct IncludeTests {
    static func folder(_ files: [String: String]) throws -> ScratchDirectory {
        let directory = try ScratchDirectory("jobgraph-include")
        try directory.write(files: files)
        return directory
    }

    static let project: [String: String] = [
        "jobgraph.yaml": """
            version: 1
            vars: {ENV: staging}
            include:
              web: website/jobgraph.yaml
              docs: {file: website/jobgraph.yaml, dir: manual, vars: {SITE: "{{ ENV }} docs"}}
            tasks:
              release: {run: "echo released >> log.txt", needs: [web:deploy]}
            """,
        "website/jobgraph.yaml": """
            version: 1
            vars: {SITE: "main site"}
            default: [build]
            tasks:
              build:
                run: "echo {{ SITE }}\\"|$SITE|$(basename $(pwd))\\" > built.txt"
                inputs: [src.txt]
                outputs: [built.txt]
              deploy: {run: "echo deployed >> ../log.txt", needs: [build], manual: true}
            """,
        "website/src.txt": "source\n",
        "manual/src.txt": "manual source\n",
    ]

    @Test func includedTasksRunInTheirFolderWithTheirVariablesUnderTheirFullIDs() async throws {
        let directory = try Self.folder(Self.project)
        defer { directory.remove() }
        let outcome = try await JobGraphBinary.run(["run", "jobgraph.yaml", "release", "docs", "--events", "events.jsonl"], in: directory)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(directory.read("website/built.txt") == "main site|main site|website\n")
        // `dir:` and `vars:` of the include: the same file, run in another folder with another value.
        #expect(directory.read("manual/built.txt") == "staging docs|staging docs|manual\n")
        #expect(directory.read("log.txt") == "deployed\nreleased\n")
        let events = try String(contentsOfFile: directory.file("events.jsonl"), encoding: .utf8)
        let ended = RunResult.finalStates(in: PipelineFolder.events(in: events))
        #expect(ended == ["web:build": "succeeded", "web:deploy": "succeeded", "release": "succeeded", "docs:build": "succeeded"])

        // The history keys use the full ids: a rerun finds the included tasks up to date.
        let again = try await JobGraphBinary.run(["run", "jobgraph.yaml", "web:build", "docs", "--events", "again.jsonl"], in: directory)
        #expect(again.status == 0, "\(again.standardError)")
        let rerun = try String(contentsOfFile: directory.file("again.jsonl"), encoding: .utf8)
        #expect(RunResult.finalStates(in: PipelineFolder.events(in: rerun)) == ["web:build": "up-to-date", "docs:build": "up-to-date"])
    }

    @Test func listAndGraphShowTheFullIDs() async throws {
        let directory = try Self.folder(Self.project)
        defer { directory.remove() }
        let list = try await JobGraphBinary.run(["list", "jobgraph.yaml"], in: directory)
        #expect(list.status == 0, "\(list.standardError)")
        #expect(list.outputLines == [
            "jobgraph.yaml: 5 tasks",
            "task         description",
            "release",
            "web:build",
            "web:deploy   (manual)",
            "docs:build",
            "docs:deploy  (manual)",
        ])
        let graph = try await JobGraphBinary.run(["graph", "jobgraph.yaml", "release"], in: directory)
        #expect(graph.status == 0, "\(graph.standardError)")
        #expect(graph.standardOutput.contains("\"web:build\" -> \"web:deploy\";"), "\(graph.standardOutput)")
        #expect(graph.standardOutput.contains("\"web:deploy\" -> \"release\";"), "\(graph.standardOutput)")
    }

    @Test func explainTakesAnIncludesNameForItsGoal() async throws {
        let directory = try Self.folder(Self.project)
        defer { directory.remove() }
        let outcome = try await JobGraphBinary.run(["explain", "jobgraph.yaml", "web"], in: directory)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.outputLines == ["web:build: runs because never ran"])
    }

    @Test func aMistakeInAnIncludedFileIsReportedAtItsOwnLine() async throws {
        var files = Self.project
        files["website/jobgraph.yaml"] = "version: 1\nvars: {SITE: x}\ntasks:\n  build:\n    run: make\n    neds: [x]\n"
        let directory = try Self.folder(files)
        defer { directory.remove() }
        let outcome = try await JobGraphBinary.run(["validate", "jobgraph.yaml"], in: directory)
        #expect(outcome.status == 2)
        // Read by both includes, the file's mistake is reported once.
        #expect(outcome.errorLines == [
            "website/jobgraph.yaml:6:5: error: unknown key 'neds' in task 'build'; did you mean 'needs'?",
        ])
    }

    @Test func aCycleOfIncludesAndAMissingFileAreExitTwoAtTheirPlace() async throws {
        let directory = try Self.folder([
            "jobgraph.yaml": "version: 1\ninclude:\n  b: b/jobgraph.yaml\n  gone: gone.yaml\ntasks:\n  t: {run: echo}\n",
            "b/jobgraph.yaml": "version: 1\ninclude:\n  top: ../jobgraph.yaml\ntasks:\n  u: {run: echo}\n",
        ])
        defer { directory.remove() }
        let outcome = try await JobGraphBinary.run(["run", "jobgraph.yaml"], in: directory)
        #expect(outcome.status == 2)
        #expect(outcome.errorLines == [
            "b/jobgraph.yaml:3:3: error: include 'top' makes a cycle of includes: jobgraph.yaml -> b/jobgraph.yaml -> b/../jobgraph.yaml; a file cannot include itself, directly or not",
            "jobgraph.yaml:4:9: error: cannot read included file 'gone.yaml': No such file or directory",
        ])
    }
}
