import Foundation
import Glibc
import JobGraphBasics
import JobGraphTestSupport
@testable import StateStore

/// A fresh directory under the system temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        let base = NSTemporaryDirectory().hasSuffix("/") ? String(NSTemporaryDirectory().dropLast()) : NSTemporaryDirectory()
        var template = Array((base + "/jobgraph-state-XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else { throw StateStoreError.fileSystem(operation: "mkdtemp", path: "", errno: errno) }
        path = String(cString: created)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)  // best effort: a leftover temp dir harms nothing
    }

    /// Writes `text` to `name` (relative), creating folders on the way.
    func write(_ text: String, to name: String) throws {
        let file = path + "/" + name
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: file, atomically: false, encoding: .utf8)
    }

    func delete(_ name: String) throws {
        try FileManager.default.removeItem(atPath: path + "/" + name)
    }

    /// Sets the modification time of `name` to `seconds` since 1970, leaving its content alone.
    func setModificationTime(of name: String, to seconds: Int) throws {
        var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
        guard utimensat(AT_FDCWD, path + "/" + name, &times, 0) == 0 else {
            throw StateStoreError.fileSystem(operation: "utimensat", path: name, errno: errno)
        }
    }
}

/// Hashes from disk and counts what it read, to prove unchanged files are not re-read.
final class CountingHasher: FileHasher {
    private let reads = Locked<[String]>([])

    /// Absolute paths read so far, in order.
    var paths: [String] { reads.withLock { $0 } }

    func reset() { reads.withLock { $0 = [] } }

    func sha256(ofFileAt path: String) throws -> String {
        reads.withLock { $0.append(path) }
        return try DiskFileHasher().sha256(ofFileAt: path)
    }
}

/// A child process run by a test, with its standard input and output as pipes. Its reads and its wait
/// block a thread of their own (`onThreadOfItsOwn`), never one of Swift's concurrency: under load, a
/// python3 taking seconds to start held half of a 2-core machine's test threads meanwhile.
final class Child: @unchecked Sendable {  // `process` and the pipes are only read after `init`
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()

    /// Starts `executable` with `arguments`; stderr goes to the test's stderr.
    init(_ executable: String, _ arguments: [String], directory: String? = nil) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// The next line the child prints, or `nil` once its output ends.
    func readLine() async -> String? {
        await onThreadOfItsOwn { [output] in
            var bytes: [UInt8] = []
            while true {
                let chunk = output.fileHandleForReading.readData(ofLength: 1)
                guard let byte = chunk.first else { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
                if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
                bytes.append(byte)
            }
        }
    }

    /// Closes the child's standard input, which the test scripts take as "let go now".
    func closeInput() throws { try input.fileHandleForWriting.close() }

    /// Waits for the child to exit and returns its exit status.
    func wait() async -> Int32 {
        await onThreadOfItsOwn { [process] in
            process.waitUntilExit()
            return process.terminationStatus
        }
    }
}

/// Runs a program to its end and returns its exit status.
func runToEnd(_ executable: String, _ arguments: [String]) async -> Int32 {
    await ExternalProgram.run(executable, arguments).status
}

/// Where Python is, for the crash tests that need a second SQLite writer; `nil` when absent.
let python3: String? = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }
