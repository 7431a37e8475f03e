import Foundation
import JobGraphBasics
import JobGraphTestSupport
import PipelineModel
import Reporters
import Testing

/// `include:` (docs/pipeline.md, "Includes"): the included files' tasks join as `NAME:ID`.
@Suite struct PipelineLoaderIncludesTests {
    /// A folder with the files given, by relative path; removed by the caller.
    static func folder(_ files: [String: String]) throws -> ScratchDirectory {
        let directory = try ScratchDirectory("jobgraph-include")
        try directory.write(files: files)
        return directory
    }

    static func load(_ directory: ScratchDirectory, _ name: String = "jobgraph.yaml", overrides: [String: String] = [:]) -> Loaded {
        var diagnostics = Diagnostics()
        let pipeline = PipelineLoader.load(contentsOf: directory.file(name), variableOverrides: overrides, diagnostics: &diagnostics)
        return Loaded(pipeline: pipeline, diagnostics: diagnostics)
    }

    /// An id of the file's own may hold `:` (`lint:fix`), but not inside an include's names, where it
    /// could be taken for the included file's task.
    @Test func anOwnIDInsideAnIncludesNamesIsRefusedAtTheTask() throws {
        let directory = try Self.folder([
            "jobgraph.yaml": """
                version: 1
                include: {web: website/jobgraph.yaml}
                tasks:
                  lint:fix: {run: echo fix}
                  web:build: {run: echo mine}
                """,
            "website/jobgraph.yaml": "version: 1\ntasks:\n  build: {run: echo build}\n",
        ])
        defer { directory.remove() }
        let loaded = Self.load(directory)
        #expect(loaded.messages == [
            "task id 'web:build' is in the names of include 'web' (line 2); rename the task or the include",
        ])
    }

    @Test func includedTasksAreNamespacedWithTheirNeedsFolderAndVariables() throws {
        let directory = try Self.folder([
            "jobgraph.yaml": """
                version: 1
                vars: {site: prod}
                include:
                  web: website/jobgraph.yaml
                  docs: {file: website/jobgraph.yaml, dir: manual, vars: {BASE: "/{{ site }}/docs"}}
                tasks:
                  release: {run: echo release, needs: [web:deploy, docs:build]}
                """,
            "website/jobgraph.yaml": """
                version: 1
                vars: {BASE: /, LOG: "{{ BASE }}log"}
                queues: {net: {max_concurrent: 1}}
                tasks:
                  build: {run: "echo {{ LOG }}", outputs: [public/index.html], aliases: [b]}
                  deploy: {run: "echo {{ BASE }}", needs: [build], queue: net, cwd: out}
                """,
        ])
        defer { directory.remove() }
        let loaded = Self.load(directory)
        #expect(loaded.lines == [])
        let pipeline = try #require(loaded.pipeline)
        #expect(pipeline.tasks.map(\.id) == ["release", "web:build", "web:deploy", "docs:build", "docs:deploy"])
        let deploy = try #require(loaded.task("web:deploy"))
        #expect(deploy.needs.map(\.value) == ["web:build"])
        #expect(deploy.queue?.value == QueueName("web:net"))
        // Its own `cwd` stays relative to the included file's folder.
        #expect(deploy.cwd?.description == "website/out")
        #expect(loaded.task("web:build")?.cwd?.description == "website")
        #expect(loaded.task("docs:build")?.cwd?.description == "manual")
        #expect(loaded.task("web:build")?.aliases.map(\.value) == ["web:b"])
        // Templates name the file's variables under the include's name; the tasks get them by their own names.
        #expect(loaded.task("web:build")?.action.commands == ["echo {{ web:LOG }}"])
        #expect(loaded.task("docs:build")?.environment.map(\.name) == ["BASE", "LOG"])
        let values = Dictionary(uniqueKeysWithValues: pipeline.variables.map { ($0.name, $0.value) })
        #expect(values == ["site": "prod", "web:BASE": "/", "web:LOG": "/log", "docs:BASE": "/prod/docs", "docs:LOG": "/prod/docslog"])
        #expect(pipeline.queues.map(\.name.rawValue) == ["web:net", "docs:net"])
        #expect(pipeline.includedGoals["web"] == ["web:build", "web:deploy"])
        // Diagnostics and graphs point at the included file's own lines.
        #expect(loaded.task("web:deploy")?.location == SourceLocation(file: directory.file("website/jobgraph.yaml"), line: 6, column: 3))
    }

    @Test func includesNestAndAnIncludedDefaultIsItsGoal() throws {
        let directory = try Self.folder([
            "jobgraph.yaml": "version: 1\ninclude: {web: web/jobgraph.yaml}\ntasks:\n  all: {run: echo, needs: [web:sub:x]}\n",
            "web/jobgraph.yaml": "version: 1\ndefault: [site]\ninclude: {sub: sub/jobgraph.yaml}\ntasks:\n  site: {run: echo, needs: [sub:x]}\n",
            "web/sub/jobgraph.yaml": "version: 1\ntasks:\n  x: {run: pwd, cwd: bin}\n  y: {run: echo, manual: true}\n",
        ])
        defer { directory.remove() }
        let loaded = Self.load(directory)
        #expect(loaded.lines == [])
        #expect(loaded.pipeline?.tasks.map(\.id) == ["all", "web:site", "web:sub:x", "web:sub:y"])
        #expect(loaded.task("web:site")?.needs.map(\.value) == ["web:sub:x"])
        #expect(loaded.task("web:sub:x")?.cwd?.description == "web/sub/bin")
        #expect(loaded.pipeline?.includedGoals["web"] == ["web:site"])
        #expect(loaded.pipeline?.includedGoals["web:sub"] == ["web:sub:x"])
    }

    @Test func aCycleOfIncludesIsAnErrorAtTheIncludeThatClosesIt() throws {
        let directory = try Self.folder([
            "a.yaml": "version: 1\ninclude: {b: b.yaml}\ntasks:\n  t: {run: echo}\n",
            "b.yaml": "version: 1\ninclude:\n  again: a.yaml\ntasks:\n  u: {run: echo}\n",
        ])
        defer { directory.remove() }
        let loaded = Self.load(directory, "a.yaml")
        let a = directory.file("a.yaml"), b = directory.file("b.yaml")
        #expect(loaded.pipeline == nil)
        #expect(loaded.lines == [
            "\(b):3:3: error: include 'again' makes a cycle of includes: \(a) -> \(b) -> \(a); a file cannot include itself, directly or not",
        ])
    }

    @Test func aMissingFileAndAnUnknownIncludedTaskAreErrorsAtTheirPlace() throws {
        let directory = try Self.folder([
            "jobgraph.yaml": """
                version: 1
                include:
                  gone: nowhere/jobgraph.yaml
                  web: web.yaml
                tasks:
                  t: {run: echo, needs: [gone:build, web:biuld]}
                """,
            "web.yaml": "version: 1\ntasks:\n  build: {run: echo}\n",
        ])
        defer { directory.remove() }
        let loaded = Self.load(directory)
        let root = directory.file("jobgraph.yaml")
        // A name into the missing file is not reported again.
        #expect(loaded.lines == [
            "\(root):3:9: error: cannot read included file '\(directory.file("nowhere/jobgraph.yaml"))': No such file or directory",
            "\(root):6:38: error: unknown task 'web:biuld' in 'needs'; did you mean 'web:build'?",
        ])
    }

    @Test func anIncludedFileMayNotSetUpTheRunNorGetUndeclaredVariables() throws {
        let directory = try Self.folder([
            "jobgraph.yaml": "version: 1\ninclude:\n  web: {file: web.yaml, vars: {BASEE: x}}\ntasks:\n  t: {run: echo}\n",
            "web.yaml": "version: 1\nvars: {BASE: /}\nexecutor: slurm\non_success: echo\ntasks:\n  build: {run: echo}\n",
        ])
        defer { directory.remove() }
        let loaded = Self.load(directory)
        let root = directory.file("jobgraph.yaml"), web = directory.file("web.yaml")
        #expect(loaded.lines == [
            "\(root):3:32: error: include 'web' sets variable 'BASEE', which '\(web)' does not declare; did you mean 'BASE'?",
            "\(web):3:1: error: 'executor' applies to the whole run, so only the file that is run may set it; remove it from this file, which include 'web' reads",
            "\(web):4:1: error: 'on_success' applies to the whole run, so only the file that is run may set it; remove it from this file, which include 'web' reads",
        ])
    }

    @Test func aCommandLineVariableSetsTheRunFilesVariablesWhichAnIncludeMayPassOn() throws {
        let directory = try Self.folder([
            "jobgraph.yaml": "version: 1\nvars: {BASE: /}\ninclude:\n  web: {file: web.yaml, vars: {BASE: \"{{ BASE }}\"}}\n  raw: web.yaml\ntasks:\n  t: {run: echo}\n",
            "web.yaml": "version: 1\nvars: {BASE: /site}\ntasks:\n  build: {run: echo}\n",
        ])
        defer { directory.remove() }
        let loaded = Self.load(directory, overrides: ["BASE": "/given"])
        #expect(loaded.lines == [])
        let values = Dictionary(uniqueKeysWithValues: (loaded.pipeline?.variables ?? []).map { ($0.name, $0.value) })
        #expect(values == ["BASE": "/given", "web:BASE": "/given", "raw:BASE": "/site"])
    }
}

extension Action {
    /// The commands of a `run` as written, for compact expectations.
    var commands: [String] {
        if case .run(let commands) = self { return commands.map(\.description) }
        return []
    }
}
