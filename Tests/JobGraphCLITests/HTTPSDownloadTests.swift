import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The download step over HTTPS (issue 15, "TLS"), against python3's `ssl` server on 127.0.0.1 with a
/// certificate `openssl req -x509` makes for the test.
///
/// Debian's libcurl trusts only the system's CA bundle, which it was built to read: neither `SSL_CERT_FILE`
/// nor `CURL_CA_BUNDLE` (read only by the curl program) changes that. So the trusted case
/// makes the certificate trusted the way a user would, in the system bundle, but only inside a private
/// mount namespace of the one `jobgraph` process (`unshare -m` and a bind mount), leaving the machine's
/// files alone; that needs root.
@Suite struct HTTPSDownloadTests {
    /// A self-signed certificate for 127.0.0.1 and a python3 HTTPS server serving `served/`.
    final class Server {
        let folder: ScratchDirectory
        let process = Process()
        let port: Int

        init() async throws {
            folder = try ScratchDirectory("jobgraph-https")
            try FileManager.default.createDirectory(atPath: folder.file("served"), withIntermediateDirectories: true)
            try folder.write("payload over TLS\n", to: "served/file.txt")
            let openssl = await ExternalProgram.run("/usr/bin/env", [
                "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1", "-keyout", folder.file("key.pem"), "-out", folder.file("cert.pem"),
            ])
            #expect(openssl.status == 0, "openssl could not make the certificate: \(openssl.errorOutput)")
            try folder.write("""
                import http.server, os, ssl, sys
                os.chdir(sys.argv[1])
                server = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                context.load_cert_chain(sys.argv[2], sys.argv[3])
                server.socket = context.wrap_socket(server.socket, server_side=True)
                print(server.server_address[1], flush=True)
                server.serve_forever()
                """, to: "serve.py")
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", folder.file("serve.py"), folder.file("served"), folder.file("cert.pem"), folder.file("key.pem")]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            // The first line is the port, printed once the socket listens; read on a thread of its own, as
            // python3 may take seconds to start on a loaded machine.
            let reader = output.fileHandleForReading
            let line = await onThreadOfItsOwn { () -> Data in
                var line = Data()
                while let byte = try? reader.read(upToCount: 1), let first = byte.first, first != UInt8(ascii: "\n") {
                    line.append(first)
                }
                return line
            }
            port = Int(String(decoding: line, as: UTF8.self)) ?? 0
            #expect(port > 0, "the HTTPS server did not start")
        }

        var url: String { "https://127.0.0.1:\(port)/file.txt" }

        /// SIGKILL: a child started from a test process may inherit a signal mask that blocks SIGTERM. The
        /// server is reaped by Foundation; its folder goes at once, as nothing reads it any more.
        func stop() {
            kill(process.processIdentifier, SIGKILL)
            folder.remove()
        }
    }

    private static let systemBundle = "/etc/ssl/certs/ca-certificates.crt"

    private func pipeline(_ server: Server) throws -> PipelineFolder {
        try PipelineFolder("""
            version: 1
            tasks:
              fetch: {download: {url: "\(server.url)", to: build/file.txt}}
            """, prefix: "jobgraph-https-run")
    }

    /// The files in `build/`, temporary ones included.
    private func built(_ folder: PipelineFolder) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: folder.directory.file("build"))) ?? []
    }

    @Test func anUntrustedCertificateFailsTheTaskAndLeavesNoFile() async throws {
        let server = try await Server()
        defer { server.stop() }
        let folder = try pipeline(server)
        defer { folder.remove() }
        // Even with the variables other tools read for a CA bundle: this client does not honour them.
        var environment = JobGraphBinary.environment
        environment["SSL_CERT_FILE"] = server.folder.file("cert.pem")
        environment["CURL_CA_BUNDLE"] = server.folder.file("cert.pem")
        let run = try await folder.run([], environment: environment)
        #expect(run.status == 1)
        let error = try #require(run.events.last { $0["task"] as? String == "fetch" }?["error"] as? String)
        #expect(error == "certificate not trusted for '\(server.url)': self-signed certificate (jobgraph trusts the "
            + "system's CA certificates, /etc/ssl/certs; add a private CA there with update-ca-certificates)")
        #expect(built(folder).isEmpty, "no file, partial or whole: \(built(folder))")
    }

    @Test(.enabled(if: getuid() == 0 && FileManager.default.fileExists(atPath: systemBundle), "needs root for a mount namespace"))
    func aCertificateTrustedThroughTheSystemBundleDownloads() async throws {
        let server = try await Server()
        defer { server.stop() }
        let folder = try pipeline(server)
        defer { folder.remove() }
        let bundle = (try String(contentsOfFile: Self.systemBundle, encoding: .utf8)) + (server.folder.read("cert.pem") ?? "")
        try server.folder.write(bundle, to: "bundle.pem")
        let binary = try JobGraphBinary.location().path
        let outcome = try await RunningJobGraph(
            executable: URL(fileURLWithPath: "/usr/bin/unshare"),
            arguments: ["-m", "sh", "-c", "mount --bind \"$0\" \(Self.systemBundle) && exec \"$@\"", server.folder.file("bundle.pem"),
                        binary, "run", "p.yaml", "--progress", "plain"],
            directory: folder.directory, environment: JobGraphBinary.environment).finish()
        #expect(outcome.status == 0, "\(outcome.standardOutput)\(outcome.standardError)")
        #expect(folder.directory.read("build/file.txt") == "payload over TLS\n")
        #expect(built(folder) == ["file.txt"])
    }
}
