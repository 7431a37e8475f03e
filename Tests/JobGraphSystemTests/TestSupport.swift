import Foundation
import Glibc
import JobGraphSystem

/// A fresh directory under the system temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/jobgraph-system-XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else { throw SystemError("mkdtemp", errno: Errno(rawValue: errno)) }
        path = String(cString: created)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)   // best effort: a leftover temp dir harms nothing
    }

    /// Written through a close-on-exec descriptor: Foundation's `String.write(toFile:)` opens without one,
    /// so a child another test spawned meanwhile kept the file open for writing for its whole life, and
    /// running the script failed with "Text file busy" (CI, `scriptWithoutInterpreterLineRunsThroughTheShell`).
    func write(_ text: String, to name: String, executable: Bool = false) throws {
        let file = path + "/" + name
        let descriptor = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, executable ? 0o755 : 0o644)
        guard descriptor >= 0 else { throw SystemError("open", errno: Errno(rawValue: errno)) }
        defer { close(descriptor) }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let count = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw SystemError("write", errno: Errno(rawValue: errno)) }
            bytes = bytes.dropFirst(count)
        }
        try FileManager.default.setAttributes([.posixPermissions: executable ? 0o755 : 0o644], ofItemAtPath: file)
    }
}

/// What a watched child reported, in order.
enum ChildEvent: Hashable, Sendable {
    case line(String)
    case exited(TerminationStatus)
    case failed(SystemError)
}

/// Forwards a child's events into an `AsyncStream`, so tests await them instead of sleeping.
final class ChildRecorder: ChildEventHandler {
    let events: AsyncStream<ChildEvent>
    private let continuation: AsyncStream<ChildEvent>.Continuation

    init() {
        (events, continuation) = AsyncStream.makeStream(of: ChildEvent.self)
    }

    func child(_ token: ChildToken, printed line: [UInt8]) {
        continuation.yield(.line(String(decoding: line, as: UTF8.self)))
    }

    func child(_ token: ChildToken, exited status: TerminationStatus) {
        continuation.yield(.exited(status))
        continuation.finish()
    }

    func child(_ token: ChildToken, failed error: SystemError) {
        continuation.yield(.failed(error))
        continuation.finish()
    }

    /// All lines, then the final event (`nil` only if the stream ended without one).
    func collect() async -> (lines: [String], end: ChildEvent?) {
        var lines: [String] = []
        for await event in events {
            if case .line(let text) = event { lines.append(text) } else { return (lines, event) }
        }
        return (lines, nil)
    }
}

/// The environment children get in tests: a fixed, small one, so the host's cannot change results.
let testEnvironment = ["PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C"]

/// Runs `body` with a fresh loop, stopping it afterwards.
func withEventLoop<Result>(
    signals: SignalSet = [], onSignal: (@Sendable (ProcessSignal) -> Void)? = nil,
    _ body: (EventLoop) async throws -> Result
) async throws -> Result {
    let loop = try EventLoop(signals: signals, onSignal: onSignal)
    defer { loop.stop() }
    return try await body(loop)
}

/// Spawns `command`, watches it on `loop`, and returns its lines and final event.
/// - Parameter holdsOutputOpen: as a run spawns its tasks (`LocalExecutor`), unless told otherwise.
func run(
    _ command: String, on loop: EventLoop, environment: [String] = testEnvironment,
    sharedEnvironment: EnvironmentBlock? = nil, workingDirectory: String? = nil, niceness: CInt = 0,
    holdsOutputOpen: Bool = true
) async throws -> (lines: [String], end: ChildEvent?) {
    var spawner = ProcessSpawner()
    spawner.holdsOutputOpen = holdsOutputOpen
    let child = try spawner.spawn(
        command: command, environment: environment, sharedEnvironment: sharedEnvironment,
        workingDirectory: workingDirectory, niceness: niceness)
    let recorder = ChildRecorder()
    loop.watch(child, token: ChildToken(rawValue: 1), handler: recorder)
    return await recorder.collect()
}

/// The process ids whose process group is `group`, read from `/proc/PID/stat` (field 5).
func processes(inGroup group: ProcessID) -> [pid_t] {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
    return entries.compactMap { entry -> pid_t? in
        guard let pid = pid_t(entry),
              let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
              let afterName = stat.range(of: ") ", options: .backwards)
        else { return nil }   // a process that ended while we looked is simply not in the group
        let fields = stat[afterName.upperBound...].split(separator: " ")
        // fields: state, ppid, pgrp …
        guard fields.count > 2, pid_t(fields[2]) == group.rawValue else { return nil }
        return pid
    }
}
