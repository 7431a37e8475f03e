import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The output cache through the binary (docs/cache.md): a second folder with the same pipeline restores
/// what the first one made, byte for byte, with nothing run; what changes the key runs the task again.
@Suite(.hangLimit(minutes: 2))
struct OutputCacheRunTests {
    static let pipeline = """
        version: 1
        tasks:
          build:
            cache: true
            cache_env: [FLAVOR]
            inputs: [src.txt]
            outputs: [out]
            run:
              - mkdir -p out/lib && cp src.txt out/lib/copy.txt && printf '#!/bin/sh\\necho tool\\n' > out/tool && chmod 755 out/tool
              - ln -sf tool out/tool-link && echo "built $FLAVOR" && echo built >> runs.txt
          package:
            needs: [build]
            cache: true
            inputs: [out/lib/copy.txt]
            outputs: [package.txt]
            run: cat out/lib/copy.txt out/lib/copy.txt > package.txt
        """

    /// A project folder holding `pipeline` and `src.txt`, with the cache in `cache` beside the folders.
    static func project(in cache: ScratchDirectory, source: String = "hello\n") throws -> PipelineFolder {
        let folder = try PipelineFolder(pipeline, prefix: "jobgraph-cache-cli")
        try folder.write(source, to: "src.txt")
        return folder
    }

    static func run(_ folder: PipelineFolder, cache: ScratchDirectory, _ extra: [String] = [],
                    environment: [String: String] = JobGraphBinary.environment) async throws -> RunResult {
        try await folder.run(["--cache-dir", cache.path] + extra, environment: environment)
    }

    static func restored(_ result: RunResult) -> Set<String> {
        Set(result.finalStates.filter { $0.value == "restored" }.keys)
    }

    @Test func aSecondFolderRestoresEveryOutputByteForByteWithNothingRun() async throws {
        let cache = try ScratchDirectory("jobgraph-cache-store")
        defer { cache.remove() }
        let first = try Self.project(in: cache)
        defer { first.remove() }
        let made = try await Self.run(first, cache: cache)
        #expect(made.status == 0)
        #expect(made.executed == ["build", "package"])

        let second = try Self.project(in: cache)
        defer { second.remove() }
        let restored = try await Self.run(second, cache: cache)
        #expect(restored.status == 0, "\(restored.outcome.standardError)")
        #expect(restored.executed.isEmpty)
        #expect(Self.restored(restored) == ["build", "package"])
        #expect(second.directory.read("runs.txt") == nil, "nothing ran")
        for name in ["out/lib/copy.txt", "out/tool", "package.txt"] {
            #expect(second.directory.read(name) == first.directory.read(name), "\(name)")
        }
        var info = stat()
        #expect(lstat(second.directory.file("out/tool"), &info) == 0 && info.st_mode & 0o777 == 0o755)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: second.directory.file("out/tool-link")) == "tool")
        // The log is replayed, with the task's prefix, and into the task's log file.
        #expect(restored.outcome.outputLines.contains("build | built "))
        #expect(second.directory.read(".jobgraph/logs/build.log")?.contains("built \n") == true)
        #expect(restored.outcome.outputLines.last { $0.contains("restored") }?.hasPrefix("2 restored") == true)
        // The key is in the events, the same in both folders.
        let keys = { (result: RunResult) in result.events.compactMap { $0["cache_key"] as? String } }
        #expect(keys(restored).count == 2)
        #expect(keys(restored) == keys(made))
        // Its end says where it came from: the first folder's run.
        let end = restored.events.first { $0["task"] as? String == "build" && $0["to"] as? String == "restored" }
        #expect((end?["reason"] as? String)?.hasPrefix("cache hit \(keys(made)[0].prefix(8)) (local cache, stored by run 1 on ") == true)
        // Restored outputs count as the task's success: the next run finds them up to date.
        #expect(try await Self.run(second, cache: cache).upToDate == ["build", "package"])
    }

    @Test func theDryRunAndExplainSayWhatWouldBeRestoredAndFromWhere() async throws {
        let cache = try ScratchDirectory("jobgraph-cache-store")
        defer { cache.remove() }
        let first = try Self.project(in: cache)
        defer { first.remove() }
        let made = try await Self.run(first, cache: cache)
        let key = try #require(made.events.first { $0["task"] as? String == "build" && $0["cache_key"] != nil }?["cache_key"] as? String)

        let second = try Self.project(in: cache)
        defer { second.remove() }
        let plan = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run", "--json", "--cache-dir", cache.path], in: second.directory)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(plan.standardOutput.utf8)) as? [String: Any])
        let tasks = try #require(document["tasks"] as? [[String: Any]])
        let build = try #require(tasks.first { $0["task"] as? String == "build" })
        #expect(build["decision"] as? String == "restored")
        #expect((build["reason"] as? String)?.hasPrefix("restored: cache hit \(key.prefix(8))… (local cache, stored by run 1 on ") == true)
        // Its dependent's inputs come from it: decided at its start.
        #expect(tasks.first { $0["task"] as? String == "package" }?["decision"] as? String == "may-run")

        let explained = try await JobGraphBinary.run(["explain", "p.yaml", "build", "--cache-dir", cache.path], in: second.directory)
        #expect(explained.outputLines.first?.hasPrefix("build: restored: cache hit \(key.prefix(8))… (local cache, ") == true)
        let withoutCache = try await JobGraphBinary.run(["explain", "p.yaml", "build", "--no-cache"], in: second.directory)
        #expect(withoutCache.outputLines.first == "build: runs because never ran")
    }

    @Test func aChangedInputOrCacheEnvVariableRunsTheTaskAgain() async throws {
        let cache = try ScratchDirectory("jobgraph-cache-store")
        defer { cache.remove() }
        var environment = JobGraphBinary.environment
        environment["FLAVOR"] = "debug"
        let first = try Self.project(in: cache)
        defer { first.remove() }
        #expect(try await Self.run(first, cache: cache, environment: environment).executed == ["build", "package"])

        let changedInput = try Self.project(in: cache, source: "changed\n")
        defer { changedInput.remove() }
        #expect(try await Self.run(changedInput, cache: cache, environment: environment).executed == ["build", "package"])

        environment["FLAVOR"] = "release"
        let changedVariable = try Self.project(in: cache)
        defer { changedVariable.remove() }
        // The package's key holds the build's key, so it runs too, though its input has the same bytes.
        #expect(try await Self.run(changedVariable, cache: cache, environment: environment).executed == ["build", "package"])

        // An outside variable that `cache_env` does not name is not in the key.
        environment["FLAVOR"] = "debug"
        environment["UNRELATED"] = "x"
        let unrelated = try Self.project(in: cache)
        defer { unrelated.remove() }
        #expect(Self.restored(try await Self.run(unrelated, cache: cache, environment: environment)) == ["build", "package"])
    }

    @Test func noCacheRunsEverythingAndACorruptBlobIsAMissWithAWarning() async throws {
        let cache = try ScratchDirectory("jobgraph-cache-store")
        defer { cache.remove() }
        let first = try Self.project(in: cache)
        defer { first.remove() }
        #expect(try await Self.run(first, cache: cache).status == 0)

        let second = try Self.project(in: cache)
        defer { second.remove() }
        #expect(try await Self.run(second, cache: cache, ["--no-cache"]).executed == ["build", "package"])

        // Every blob of the cache tampered with: no output is restored from one.
        let blobs = FileManager.default.enumerator(atPath: cache.file("cas"))?.allObjects as? [String] ?? []
        for blob in blobs where blob.contains("/") {
            try "tampered".write(toFile: cache.file("cas/" + blob), atomically: false, encoding: .utf8)
        }
        let third = try Self.project(in: cache)
        defer { third.remove() }
        let result = try await Self.run(third, cache: cache)
        #expect(result.status == 0)
        #expect(result.executed == ["build", "package"])
        #expect(result.outcome.errorLines.contains { $0.hasPrefix("warning: cannot restore 'build' from the cache") && $0.contains("does not match its SHA-256") })
        #expect(third.directory.read("out/lib/copy.txt") == "hello\n")
    }

    /// A kill while a large output is being stored leaves no blob whose name is not its content's hash and
    /// no record: a later run from another folder runs the task, or restores it whole.
    @Test func aKillMidStoreLeavesNothingALaterRunTrusts() async throws {
        let cache = try ScratchDirectory("jobgraph-cache-store")
        defer { cache.remove() }
        let yaml = """
            version: 1
            tasks:
              big:
                cache: true
                outputs: [big.bin]
                run: head -c 20000000 /dev/urandom > big.bin
            """
        let folder = try PipelineFolder(yaml, prefix: "jobgraph-cache-cli")
        defer { folder.remove() }
        let running = try JobGraphBinary.start(["run", "p.yaml", "--cache-dir", cache.path, "--events", "events.jsonl"], in: folder.directory)
        // Its store starts once it has succeeded: hashing and copying 20 MB takes a while after that.
        #expect(await running.waitForTransitions(to: "succeeded", in: "events.jsonl"))
        running.send(SIGKILL)
        _ = try await running.finish()

        let records = FileManager.default.enumerator(atPath: cache.file("ac"))?.allObjects as? [String] ?? []
        let blobs = (FileManager.default.enumerator(atPath: cache.file("cas"))?.allObjects as? [String] ?? []).filter { $0.contains("/") }
        for blob in blobs {
            let digest = await ExternalProgram.run("/usr/bin/sha256sum", [cache.file("cas/" + blob)]).output.prefix(64)
            #expect(blob.hasSuffix("/" + digest), "a blob under a name that is not its hash: \(blob)")
        }
        let again = try PipelineFolder(yaml, prefix: "jobgraph-cache-cli")
        defer { again.remove() }
        let result = try await Self.run(again, cache: cache)
        #expect(result.status == 0)
        if records.filter({ $0.contains("/") }).isEmpty {
            #expect(result.executed == ["big"])
        } else {
            #expect(Self.restored(result) == ["big"])
            let restoredSum = await ExternalProgram.run("/usr/bin/sha256sum", [again.directory.file("big.bin")]).output.prefix(64)
            let madeSum = await ExternalProgram.run("/usr/bin/sha256sum", [folder.directory.file("big.bin")]).output.prefix(64)
            #expect(restoredSum == madeSum)
        }
    }

    /// A kill while a large output is being restored leaves it absent or whole, never a part, and the next
    /// run restores it whole.
    @Test func aKillMidRestoreLeavesNoPartialOutput() async throws {
        let cache = try ScratchDirectory("jobgraph-cache-store")
        defer { cache.remove() }
        let yaml = """
            version: 1
            tasks:
              big:
                cache: true
                outputs: [big.bin]
                run: head -c 20000000 /dev/urandom > big.bin
            """
        let made = try PipelineFolder(yaml, prefix: "jobgraph-cache-cli")
        defer { made.remove() }
        #expect(try await Self.run(made, cache: cache).executed == ["big"])
        let sum = { (folder: PipelineFolder) async in
            await ExternalProgram.run("/usr/bin/sha256sum", [folder.directory.file("big.bin")]).output.prefix(64)
        }
        let original = await sum(made)

        let folder = try PipelineFolder(yaml, prefix: "jobgraph-cache-cli")
        defer { folder.remove() }
        let running = try JobGraphBinary.start(["run", "p.yaml", "--cache-dir", cache.path, "--events", "events.jsonl"], in: folder.directory)
        // The restore starts once the task is executing: copying and checking 20 MB takes a while.
        #expect(await running.waitForTransitions(to: "executing", in: "events.jsonl"))
        running.send(SIGKILL)
        _ = try await running.finish()
        if FileManager.default.fileExists(atPath: folder.directory.file("big.bin")) {
            #expect(await sum(folder) == original, "a partial output")
        }
        // Up to date only if the kill came after the restore was recorded whole.
        let result = try await Self.run(folder, cache: cache)
        #expect(["restored", "up-to-date"].contains(result.finalStates["big"]))
        #expect(await sum(folder) == original)
    }

    @Test func twoRunsShareOneCacheAtOnceAndEvictionEmptiesIt() async throws {
        let cache = try ScratchDirectory("jobgraph-cache-store")
        defer { cache.remove() }
        let folders = try (0..<2).map { _ in try Self.project(in: cache) }
        defer { folders.forEach { $0.remove() } }
        let running = try folders.map { folder in
            try JobGraphBinary.start(["run", "p.yaml", "--cache-dir", cache.path], in: folder.directory)
        }
        for run in running { #expect(try await run.finish().status == 0) }

        let stats = try await JobGraphBinary.run(["cache", "stats", "--cache-dir", cache.path], in: folders[0].directory)
        #expect(stats.outputLines.last?.hasPrefix("2 action records, ") == true, "\(stats.outputLines)")
        let third = try Self.project(in: cache)
        defer { third.remove() }
        #expect(Self.restored(try await Self.run(third, cache: cache)) == ["build", "package"])

        let collected = try await JobGraphBinary.run(["cache", "gc", "--max-size", "0", "--cache-dir", cache.path], in: third.directory)
        #expect(collected.status == 0)
        #expect(collected.outputLines.last?.hasSuffix("; 0 B kept") == true, "\(collected.outputLines)")
        let fourth = try Self.project(in: cache)
        defer { fourth.remove() }
        #expect(try await Self.run(fourth, cache: cache).executed == ["build", "package"])
    }
}
