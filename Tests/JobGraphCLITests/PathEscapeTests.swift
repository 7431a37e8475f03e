import Foundation
import JobGraphTestSupport
import Testing

/// A substituted value never leads a path out of the pipeline's folder, even when it is harmless alone
/// and only the joining makes the escape: `.` + `./x` + `.png` is `../x.png` (issue 15). Each templated
/// path key, through the binary, with real steps that would write, read or run outside without the check.
@Suite struct PathEscapeTests {
    /// A scratch folder holding the pipeline in `project/`, so that "outside" is a folder the test sees.
    struct Layout {
        let root: ScratchDirectory
        var project: String { root.file("project") }

        init(_ yaml: String) throws {
            root = try ScratchDirectory("jobgraph-paths")
            try FileManager.default.createDirectory(atPath: root.file("project"), withIntermediateDirectories: true)
            try root.write(yaml, to: "project/p.yaml")
        }

        /// What lies outside the project, apart from the files the test harness writes there.
        func outside() throws -> Set<String> {
            Set(try FileManager.default.contentsOfDirectory(atPath: root.path)
                .filter { $0 != "project" && $0 != "events.jsonl" && !$0.hasPrefix("jobgraph-") })
        }

        /// `jobgraph run project/p.yaml` with its events, returning the exit status and each task's last event.
        func run(_ extra: [String] = []) async throws -> (status: Int32, last: [String: [String: Any]], stderr: String) {
            let outcome = try await JobGraphBinary.run(
                ["run", root.file("project/p.yaml"), "--progress", "plain", "--events", "events.jsonl"] + extra, in: root)
            var last: [String: [String: Any]] = [:]
            for event in PipelineFolder.events(in: root.read("events.jsonl") ?? "") {
                if let task = event["task"] as? String { last[task] = event }
            }
            return (outcome.status, last, outcome.standardError)
        }

        /// The message for `key` rendered to `rendered` from `template`.
        func message(_ key: String, _ rendered: String, from template: String) -> String {
            "\(key) '\(rendered)' (from '\(template)') leads outside the pipeline's folder '\(project)'"
        }
    }

    /// The issue's case: an item `./x` read at run time from a list, and `output: ".{{ item }}.png"`.
    @Test func aFilterOutputEscapingByJoiningFailsTheItem() async throws {
        let layout = try Layout("""
            version: 1
            tasks:
              list: {run: "printf './x\\\\nok\\\\n' > list.txt"}
              sepia:
                needs: [list]
                foreach: {from: list.txt}
                filter: {input: photo.png, output: ".{{ item }}.png", effect: sepia}
            """)
        defer { layout.root.remove() }
        await writePNG(to: layout.root.file("project/photo.png"))
        let before = try layout.outside()
        let run = try await layout.run()
        #expect(run.status == 1)
        #expect(run.last["sepia[0]"]?["to"] as? String == "failed")
        #expect(run.last["sepia[0]"]?["error"] as? String == layout.message("output", "../x.png", from: ".{{ item }}.png"))
        #expect(run.last["sepia[1]"]?["to"] as? String == "succeeded")
        #expect(layout.root.exists("project/.ok.png"))
        #expect(try layout.outside() == before, "a file was written outside the pipeline's folder")
    }

    @Test func aFilterInputEscapingByJoiningIsNotRead() async throws {
        let layout = try Layout("""
            version: 1
            tasks:
              sepia:
                foreach: ["./secret"]
                filter: {input: ".{{ item }}.png", output: "out.png", effect: sepia}
            """)
        defer { layout.root.remove() }
        await writePNG(to: layout.root.file("secret.png"))
        let run = try await layout.run()
        #expect(run.status == 1)
        #expect(run.last["sepia[./secret]"]?["error"] as? String == layout.message("input", "../secret.png", from: ".{{ item }}.png"))
        #expect(!layout.root.exists("project/out.png"))
    }

    @Test func aDownloadDestinationEscapingByJoiningIsNotWritten() async throws {
        let server = try LoopbackHTTPServer(routes: ["/f": .body(Array("payload".utf8))])
        defer { server.stop() }
        let layout = try Layout("""
            version: 1
            tasks:
              fetch:
                foreach: ["./fetched.bin", "/fetched.bin"]
                download: {url: "\(server.url("/f"))", to: ".{{ item }}"}
            """)
        defer { layout.root.remove() }
        let run = try await layout.run(["--keep-going"])
        #expect(run.status == 1)
        #expect(run.last["fetch[./fetched.bin]"]?["error"] as? String == layout.message("to", "../fetched.bin", from: ".{{ item }}"))
        // `.` + `/fetched.bin` would be inside, but an absolute value is refused whatever surrounds it.
        #expect(run.last["fetch[/fetched.bin]"]?["error"] as? String == "to './fetched.bin' (from '.{{ item }}'): the value "
            + "'/fetched.bin' of {{ item }} may not be an absolute path or contain '..'")
        #expect(!layout.root.exists("project/fetched.bin"))
        #expect(try layout.outside().isEmpty)
    }

    @Test func aWorkingDirectoryEscapingByJoiningRunsNothing() async throws {
        let layout = try Layout("""
            version: 1
            tasks:
              here:
                foreach: ["./", "hidden"]
                cwd: ".{{ item }}"
                run: touch ran-here
            """)
        defer { layout.root.remove() }
        try FileManager.default.createDirectory(atPath: layout.root.file("project/.hidden"), withIntermediateDirectories: true)
        let run = try await layout.run(["--keep-going"])
        #expect(run.status == 1)
        #expect(run.last["here[./]"]?["error"] as? String == layout.message("cwd", "../", from: ".{{ item }}"))
        #expect(run.last["here[hidden]"]?["to"] as? String == "succeeded")
        #expect(layout.root.exists("project/.hidden/ran-here"))
        #expect(try layout.outside().isEmpty)
    }

    @Test(arguments: ["inputs", "outputs"])
    func declaredPathsEscapingByJoiningFailTheTask(key: String) async throws {
        let layout = try Layout("""
            version: 1
            tasks:
              build:
                foreach: ["."]
                \(key): [".{{ item }}/elsewhere/**"]
                run: touch ran
            """)
        defer { layout.root.remove() }
        let run = try await layout.run()
        #expect(run.status == 1)
        #expect(run.last["build[.]"]?["error"] as? String == layout.message(key, "../elsewhere/**", from: ".{{ item }}/elsewhere/**"))
        #expect(!layout.root.exists("project/ran"))
    }

    @Test func aFanOutListEscapingByJoiningIsNotRead() async throws {
        let layout = try Layout("""
            version: 1
            vars: {at: ""}
            tasks:
              each:
                foreach: {from: ".{{ at }}/list.txt"}
                run: echo {{ item }}
            """)
        defer { layout.root.remove() }
        try layout.root.write("outside\n", to: "list.txt")
        let run = try await layout.run(["--var", "at=."])
        #expect(run.status == 1)
        #expect(run.last["each"]?["error"] as? String == layout.message("foreach.from", "../list.txt", from: ".{{ at }}/list.txt"))
    }

    /// A condition cannot be met by a file outside: the task is skipped with the reason, as for any
    /// condition that cannot be rendered.
    @Test func aFileExistsConditionEscapingByJoiningIsUnmet() async throws {
        let layout = try Layout("""
            version: 1
            tasks:
              gated:
                foreach: ["."]
                conditions: [{file_exists: ".{{ item }}/marker"}]
                run: touch ran
            """)
        defer { layout.root.remove() }
        try layout.root.write("", to: "marker")
        let run = try await layout.run()
        #expect(run.last["gated[.]"]?["to"] as? String == "skipped")
        #expect(run.last["gated[.]"]?["error"] as? String
            == "condition not met: " + layout.message("file_exists", "../marker", from: ".{{ item }}/marker"))
        #expect(!layout.root.exists("project/ran"))
    }

    /// The file's own text may lead anywhere: a value inside that place is fine, one leaving it is not.
    @Test func literalTextOutsideConfinesTheValueToWhereItLeads() async throws {
        let layout = try Layout("""
            version: 1
            tasks:
              shared:
                foreach: ["ok", "./escaped"]
                run: "true"
                outputs: ["../shared/.{{ item }}"]
            """)
        defer { layout.root.remove() }
        let run = try await layout.run(["--keep-going"])
        #expect(run.last["shared[ok]"]?["to"] as? String == "succeeded")
        #expect(run.last["shared[./escaped]"]?["error"] as? String
            == "outputs '../shared/../escaped' (from '../shared/.{{ item }}') leads outside '\(layout.root.path)/shared', where the file puts it")
    }

    /// A 2×1 RGB PNG, written by python3's zlib so that the filter step has a real image to read.
    private func writePNG(to path: String) async {
        await ExternalProgram.python("""
            import struct, sys, zlib
            def chunk(kind, data):
                return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
            rows = b"\\x00" + bytes([200, 100, 50, 10, 20, 30])
            png = b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 1, 8, 2, 0, 0, 0)) \\
                + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
            open(sys.argv[1], "wb").write(png)
            """, [path])
    }

    /// The summary shows a failed task's last log lines: a task refused before it started wrote none, so
    /// the lines of the run before must not appear as this run's.
    @Test func aTaskRefusedBeforeItStartsShowsNoLogOfAnEarlierRun() async throws {
        let directory = try ScratchDirectory("jobgraph-paths")
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.file("ok"), withIntermediateDirectories: true)
        try directory.write("""
            version: 1
            vars: {D: ok}
            tasks:
              a: {cwd: "{{ D }}", run: "echo from-an-earlier-run; exit 3"}
            """, to: "p.yaml")
        let earlier = try await JobGraphBinary.run(["run", "p.yaml", "--progress", "plain"], in: directory)
        #expect(earlier.status == 1)
        #expect(earlier.standardOutput.contains("    from-an-earlier-run"), "\(earlier.standardOutput)")
        let refused = try await JobGraphBinary.run(["run", "p.yaml", "--var", "D=../x", "--progress", "plain"], in: directory)
        #expect(refused.status == 1, "\(refused.standardError)")
        #expect(refused.standardOutput.contains("a failed: cwd '../x'"), "\(refused.standardOutput)")
        #expect(!refused.standardOutput.contains("from-an-earlier-run"), "\(refused.standardOutput)")
    }
}
