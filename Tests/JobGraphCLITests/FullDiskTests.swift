import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The pipeline and its `.jobgraph/` on a 1 MB tmpfs (issue 15, "A full disk loses task output without a
/// word"): every file that cannot be written is said once, tasks keep their outcomes, an `--events` file
/// that lost events makes the status 1, and the built-in steps leave no partial file. Needs root to mount.
@Suite(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"), .serialized)
struct FullDiskTests {
    /// A scratch folder with `disk/`, a 1 MB tmpfs, unmounted by `remove()`.
    struct SmallDisk {
        let root: ScratchDirectory
        var disk: String { root.file("disk") }

        init() throws {
            root = try ScratchDirectory("jobgraph-full-disk")
            try FileManager.default.createDirectory(atPath: root.file("disk"), withIntermediateDirectories: true)
            let status = Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", root.file("disk")])
            #expect(status == 0, "cannot mount a tmpfs")
            guard status == 0 else { throw CocoaError(.fileWriteNoPermission) }
        }

        func remove() {
            _ = Self.run("/bin/umount", [disk])
            root.remove()
        }

        func write(_ text: String, to name: String) throws { try root.write(text, to: "disk/" + name) }

        /// `jobgraph run disk/p.yaml extra…`, its standard output and error in the scratch folder, off the tmpfs.
        func run(_ extra: [String] = []) async throws -> JobGraphBinary.Outcome {
            try await JobGraphBinary.run(["run", root.file("disk/p.yaml"), "--progress", "plain"] + extra, in: root)
        }

        static func run(_ tool: String, _ arguments: [String]) -> Int32 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            guard (try? process.run()) != nil else { return -1 }  // reported by the caller's expectation
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    @Test func lostLogsAndEventsAreSaidOnceAndTheRunFailsForTheEventFile() async throws {
        let disk = try SmallDisk()
        defer { disk.remove() }
        // 3 MB of 100-character lines, three times the disk; then a task printing one line to a new log,
        // and 100 silent ones whose events outgrow the page the event file already has.
        try disk.write("""
            version: 1
            tasks:
              loud: {run: "head -c 3000000 /dev/zero | tr '\\\\0' x | fold -w 100"}
              after: {run: "echo after-line", needs: [loud]}
              quiet: {foreach: [\((1...100).map(String.init).joined(separator: ", "))], run: "true", needs: [after]}
            """, to: "p.yaml")
        let outcome = try await disk.run(["--events", disk.disk + "/events.jsonl"])
        let noSpace = String(cString: strerror(ENOSPC))
        #expect(outcome.status == 1, "the event file the user asked for is incomplete")
        #expect(outcome.standardOutput.contains("loud  executing -> succeeded"))
        #expect(outcome.standardOutput.contains("after  executing -> succeeded"))
        #expect(outcome.standardOutput.contains("after | after-line"), "the console still has every line")
        let warnings = outcome.errorLines.filter { $0.hasPrefix("warning:") }
        let logs = disk.disk + "/.jobgraph/logs/"
        #expect(warnings.filter { $0.contains("log of task") } == [
            "warning: cannot write the log of task 'loud' to '\(logs)loud.log': \(noSpace); the rest of its output is not in the log",
            "warning: cannot write the log of task 'after' to '\(logs)after.log': \(noSpace); the rest of its output is not in the log",
        ])
        #expect(warnings.filter { $0.contains("event file") } == [
            "warning: cannot write the event file '\(disk.disk)/events.jsonl': \(noSpace); it lacks the events from here on",
        ])
        #expect(warnings.filter { $0.contains("history") }.count <= 1, "\(warnings)")
        #expect(warnings.count <= 4, "\(warnings)")
        #expect(outcome.outputLines.contains("log of loud is incomplete: \(noSpace)  (log: \(logs)loud.log)"))
        #expect(outcome.outputLines.contains("event file '\(disk.disk)/events.jsonl' is incomplete: \(noSpace)"))
    }

    @Test func withoutAnEventFileTheRunKeepsItsStatus() async throws {
        let disk = try SmallDisk()
        defer { disk.remove() }
        try disk.write("""
            version: 1
            tasks:
              loud: {run: "head -c 2000000 /dev/zero | tr '\\\\0' x | fold -w 100"}
            """, to: "p.yaml")
        let outcome = try await disk.run()
        #expect(outcome.status == 0)
        #expect(outcome.errorLines.filter { $0.contains("log of task 'loud'") }.count == 1)
    }

    @Test func aDownloadAndAFilterOnAFullDiskFailAndLeaveNoFile() async throws {
        let disk = try SmallDisk()
        defer { disk.remove() }
        let server = try LoopbackHTTPServer(routes: ["/big": .generated(count: 3_000_000)])
        defer { server.stop() }
        // The filter's input is off the small disk (a literal path may lie anywhere): 800×800 of noise.
        let noise = disk.root.file("noise.png")
        await ExternalProgram.python("""
            import os, struct, sys, zlib
            def chunk(kind, data):
                return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
            rows = b"".join(b"\\x00" + os.urandom(800 * 3) for _ in range(800))
            open(sys.argv[1], "wb").write(b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 800, 800, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(rows, 1)) + chunk(b"IEND", b""))
            """, [noise])
        try disk.write("""
            version: 1
            tasks:
              fetch: {download: {url: "\(server.url("/big"))", to: out/big.bin}}
              sepia: {filter: {input: "\(noise)", output: out/sepia.png, effect: sepia}}
            """, to: "p.yaml")
        let outcome = try await disk.run(["--keep-going", "--jobs", "1"])
        #expect(outcome.status == 1)
        let noSpace = String(cString: strerror(ENOSPC))
        for task in ["fetch", "sepia"] {
            let failed = outcome.outputLines.first { $0.hasPrefix("\(task) failed: ") }
            #expect(failed?.contains(noSpace) == true, "\(task): \(failed ?? outcome.standardOutput)")
        }
        let left = (try? FileManager.default.contentsOfDirectory(atPath: disk.disk + "/out")) ?? []
        #expect(left.isEmpty, "no output and no temporary file: \(left)")
    }
}

/// The stream-level cases on `/dev/full`, which fails every write with ENOSPC and needs no root.
@Suite struct FullDeviceStreamTests {
    private func run(_ arguments: [String], standardOutput: String) async throws -> (status: Int32, errorLines: [String]) {
        let folder = try PipelineFolder("version: 1\ntasks:\n  a: {run: \"echo hi\"}\n", prefix: "jobgraph-dev-full")
        defer { folder.remove() }
        let process = Process()
        process.executableURL = try JobGraphBinary.location()
        process.arguments = ["run", "p.yaml", "--progress", "plain"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: folder.directory.path)
        process.environment = JobGraphBinary.environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: standardOutput))
        try folder.directory.write("", to: "stderr.txt")
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: folder.directory.file("stderr.txt")))
        let (exit, continuation) = AsyncStream.makeStream(of: Int32.self)
        process.terminationHandler = { continuation.yield($0.terminationStatus); continuation.finish() }
        try process.run()
        var status: Int32 = -1
        for await code in exit { status = code }
        let lines = (folder.directory.read("stderr.txt") ?? "").split(separator: "\n").map(String.init)
        return (status, lines)
    }

    /// The console is not a file the user named: said once, and the status stays the tasks'.
    @Test func aFullStandardOutputIsSaidOnceOnStandardError() async throws {
        let result = try await run([], standardOutput: "/dev/full")
        #expect(result.status == 0)
        #expect(result.errorLines == ["warning: cannot write to standard output: \(String(cString: strerror(ENOSPC))); the rest of the output there is lost"])
    }

    @Test func aFullEventFileIsSaidOnceAndFailsTheRun() async throws {
        let result = try await run(["--events", "/dev/full"], standardOutput: "/dev/null")
        #expect(result.status == 1)
        #expect(result.errorLines == ["warning: cannot write the event file '/dev/full': \(String(cString: strerror(ENOSPC))); it lacks the events from here on"])
    }

    /// `run-finished` carries the status the process returns (docs/cli.md, "Exit codes"): it said 0 while
    /// a lost `--events` or `--trace` file made the process exit 1.
    @Test(arguments: [["--events", "/dev/full"], ["--trace", "no-such-folder/trace.json"]])
    func theEventStreamsExitStatusIsTheProcesssWhenAFileLostWrites(_ arguments: [String]) async throws {
        let directory = try ScratchDirectory("jobgraph-dev-full")
        defer { directory.remove() }
        try directory.write("version: 1\ntasks:\n  a: {run: \"echo hi\"}\n", to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--progress", "json"] + arguments, in: directory)
        #expect(outcome.status == 1, "\(outcome.standardError)")
        let finished = outcome.outputLines.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.first { $0["event"] as? String == "run-finished" }
        #expect(finished?["exit_status"] as? Int == 1, "\(outcome.standardOutput)")
    }
}

