import Foundation
import JobGraphTestSupport
import Testing

/// Debian's nginx with its WebDAV module on 127.0.0.1, as a remote output cache (docs/cache.md): files
/// PUT under `/ac/` and `/cas/` land in `root`. Started and stopped by the test; `.ci/install-deps`
/// installs it (`nginx-light`).
final class NginxWebDAV {
    static let executable = "/usr/sbin/nginx"
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable) }

    let directory: ScratchDirectory
    let port: Int
    /// nginx's master process, in the foreground (`daemon off`): a daemon would keep Foundation's exit
    /// watch of its parent open, and nobody would see that parent end.
    private let process = Process()
    var url: String { "http://127.0.0.1:\(port)/cache" }
    /// Where the server keeps what it was sent: `ac/KEY`, `cas/SHA256`.
    var root: String { directory.file("www/cache") }

    /// Starts the server; returns once it listens (nginx writes its pid file after binding its port).
    /// - Parameter token: when set, a request without `Authorization: Bearer TOKEN` gets a 401.
    init(token: String? = nil) async throws {
        directory = try ScratchDirectory("jobgraph-nginx")
        port = try LoopbackSocket.freePort()
        for folder in ["www/cache", "temp", "logs"] {
            try FileManager.default.createDirectory(atPath: directory.file(folder), withIntermediateDirectories: true)
        }
        // Its workers may run as another user than the test (root starts them as nobody).
        chmod(directory.path, 0o755)
        for folder in ["www", "www/cache", "temp"] { chmod(directory.file(folder), 0o777) }
        let guardLine = token.map { "if ($http_authorization != \"Bearer \($0)\") { return 401; }" } ?? ""
        try directory.write("""
            daemon off;
            worker_processes 1;
            pid \(directory.file("nginx.pid"));
            error_log \(directory.file("logs/error.log"));
            events { worker_connections 64; }
            http {
                access_log off;
                client_body_temp_path \(directory.file("temp"));
                server {
                    listen 127.0.0.1:\(port);
                    root \(directory.file("www"));
                    client_max_body_size 0;
                    location /cache/ {
                        \(guardLine)
                        dav_methods PUT DELETE MKCOL;
                        create_full_put_path on;
                        dav_access user:rw group:rw all:rw;
                    }
                }
            }
            """, to: "nginx.conf")
        process.executableURL = URL(fileURLWithPath: Self.executable)
        process.arguments = ["-p", directory.path, "-c", directory.file("nginx.conf")]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let pidFile = directory.file("nginx.pid")
        guard await eventually({ FileManager.default.fileExists(atPath: pidFile) || !process.isRunning }), process.isRunning else {
            Issue.record("nginx did not start: \(directory.read("logs/error.log") ?? "")")
            throw CocoaError(.executableLoad)
        }
    }

    /// The shell command that stops the server and returns once its master process is gone.
    var stopCommand: String {
        "\(Self.executable) -p \(directory.path) -c \(directory.file("nginx.conf")) -s stop; "
            + "while [ -e \(directory.file("nginx.pid")) ]; do sleep 0.05; done"
    }

    /// A test that ends before its `stop()` (a failed `#require`, its time limit) stops the server here,
    /// so that no nginx outlives the test process.
    deinit {
        if process.isRunning { process.terminate() }
    }

    /// Stops the server (if it still runs) and removes its folder.
    func stop() async {
        if process.isRunning {
            process.terminate()
            _ = await eventually { !process.isRunning }
        }
        directory.remove()
    }

    /// The paths below `root` of what the server holds, sorted: `ac/…`, `cas/…`.
    func stored() -> [String] {
        let all = FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []
        return all.filter { $0.contains("/") }.sorted()
    }
}
