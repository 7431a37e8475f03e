import Foundation
import JobGraphTestSupport
import Testing

/// The remote output cache against a real nginx with WebDAV on 127.0.0.1 (docs/cache.md, "A remote
/// cache"): what one folder stored is restored in another with an empty local cache; a server that is
/// wrong, gone or refusing is a miss with one warning, never a failure.
@Suite(.enabled(if: NginxWebDAV.isInstalled, "needs Debian's nginx (nginx-light) with its WebDAV module"), .hangLimit(minutes: 2))
struct RemoteOutputCacheTests {
    typealias Local = OutputCacheRunTests

    /// A fresh folder with its own empty local cache, run against `server`.
    static func run(_ server: NginxWebDAV, yaml: String = Local.pipeline, extra: [String] = ["--remote-cache"],
                    environment: [String: String] = JobGraphBinary.environment) async throws -> (RunResult, PipelineFolder) {
        let cache = try ScratchDirectory("jobgraph-cache-store")
        defer { cache.remove() }
        let folder = try PipelineFolder(yaml, prefix: "jobgraph-cache-cli")
        try folder.write("hello\n", to: "src.txt")
        let arguments = extra == ["--remote-cache"] ? ["--remote-cache", server.url] : extra
        return (try await folder.run(["--cache-dir", cache.path] + arguments, environment: environment), folder)
    }

    @Test func aSecondFolderWithAnEmptyLocalCacheRestoresFromTheServerWithNothingRun() async throws {
        let server = try await NginxWebDAV()
        let (made, first) = try await Self.run(server)
        defer { first.remove() }
        #expect(made.executed == ["build", "package"])
        // The run ended after its uploads: two records and every blob (two files, the tool, two logs) are there.
        #expect(server.stored().filter { $0.hasPrefix("ac/") }.count == 2)

        let (restored, second) = try await Self.run(server)
        defer { second.remove() }
        await server.stop()
        #expect(restored.status == 0, "\(restored.outcome.standardError)")
        #expect(restored.executed.isEmpty)
        #expect(Local.restored(restored) == ["build", "package"])
        for name in ["out/lib/copy.txt", "out/tool", "package.txt"] {
            #expect(second.directory.read(name) == first.directory.read(name), "\(name)")
        }
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: second.directory.file("out/tool-link")) == "tool")
        #expect(FileManager.default.isExecutableFile(atPath: second.directory.file("out/tool")))
    }

    @Test func aCorruptBlobOnTheServerIsAMissWithAWarning() async throws {
        let server = try await NginxWebDAV()
        let (_, first) = try await Self.run(server)
        defer { first.remove() }
        for path in server.stored() where path.hasPrefix("cas/") {
            try "tampered".write(toFile: server.root + "/" + path, atomically: false, encoding: .utf8)
        }
        let (result, second) = try await Self.run(server)
        defer { second.remove() }
        await server.stop()
        #expect(result.status == 0)
        #expect(result.executed == ["build", "package"])
        #expect(result.outcome.errorLines.contains { $0.hasPrefix("warning: blob ") && $0.contains("in the remote cache does not match its SHA-256") })
        #expect(second.directory.read("out/lib/copy.txt") == "hello\n")
    }

    @Test func aReadOnlyRemoteIsReadButNeverWritten() async throws {
        let server = try await NginxWebDAV()
        let readOnly = Local.pipeline.replacingOccurrences(
            of: "version: 1\n", with: "version: 1\nremote_cache: {url: \"\(server.url)\", read_only: true}\n")
        let (result, folder) = try await Self.run(server, yaml: readOnly, extra: [])
        defer { folder.remove() }
        #expect(result.executed == ["build", "package"])
        #expect(server.stored().isEmpty)
        // What a writer stored there, a read-only run restores.
        let (_, writer) = try await Self.run(server)
        defer { writer.remove() }
        let (reader, readerFolder) = try await Self.run(server, yaml: readOnly, extra: [])
        defer { readerFolder.remove() }
        await server.stop()
        #expect(Local.restored(reader) == ["build", "package"])
    }

    @Test func aWrongTokenIsOneWarningAndTheRunGoesOn() async throws {
        let server = try await NginxWebDAV(token: "s3cret-token")
        let withToken = Local.pipeline.replacingOccurrences(
            of: "version: 1\n", with: "version: 1\nremote_cache:\n  url: \(server.url)\n  header_env: {Authorization: CACHE_AUTH}\n")
        var environment = JobGraphBinary.environment
        environment["CACHE_AUTH"] = "Bearer wrong-token"
        let (refused, first) = try await Self.run(server, yaml: withToken, extra: [], environment: environment)
        defer { first.remove() }
        #expect(refused.status == 0)
        #expect(refused.executed == ["build", "package"])
        let warnings = refused.outcome.errorLines.filter { $0.hasPrefix("warning: ") }
        #expect(warnings == ["warning: remote cache \(server.url) refused the credentials (HTTP 401); going on without it"])
        #expect(server.stored().isEmpty)

        environment["CACHE_AUTH"] = "Bearer s3cret-token"
        let (accepted, second) = try await Self.run(server, yaml: withToken, extra: [], environment: environment)
        defer { second.remove() }
        #expect(server.stored().filter { $0.hasPrefix("ac/") }.count == 2)
        await server.stop()
        #expect(accepted.outcome.errorLines.filter { $0.hasPrefix("warning: ") }.isEmpty)
        // The token is nowhere in what the runs printed or recorded.
        for text in [refused.outcome.standardOutput, refused.outcome.standardError, accepted.outcome.standardOutput,
                     accepted.outcome.standardError, second.directory.read("events-1.jsonl") ?? ""] {
            #expect(!text.contains("token"))
        }
    }

    @Test func aServerStoppedMidRunIsAMissWithOneWarning() async throws {
        let server = try await NginxWebDAV()
        let yaml = Local.pipeline + """

              stop-server:
                needs: [build]
                run: \(server.stopCommand)
              late:
                needs: [stop-server]
                cache: true
                outputs: [late.txt]
                run: echo late > late.txt
              later:
                needs: [late]
                cache: true
                outputs: [later.txt]
                run: echo later > later.txt
            """
        let (result, folder) = try await Self.run(server, yaml: yaml)
        defer { folder.remove() }
        await server.stop()
        #expect(result.status == 0, "\(result.outcome.standardError)")
        #expect(result.executed == ["build", "package", "stop-server", "late", "later"])
        let warnings = result.outcome.errorLines.filter { $0.hasPrefix("warning: ") }
        #expect(warnings.count == 1, "\(warnings)")
        #expect(warnings.first?.hasPrefix("warning: cannot reach remote cache \(server.url): ") == true)
    }
}
