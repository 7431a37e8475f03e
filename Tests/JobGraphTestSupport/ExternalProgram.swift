import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Runs `body`, a blocking call (a read, a wait for a process or a lock), on a thread of its own and
/// returns what it returns, so that an async test waiting for it holds none of the few threads Swift's
/// concurrency runs every test on (see `ExternalProgram`).
public func onThreadOfItsOwn<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// A program other than jobgraph that a test runs to its end (python3, chromium, the Slurm scripts and
/// clients, mount): its exit status and what it wrote, awaited without holding a thread, and given up on
/// after a time limit.
///
/// Why not `Process.waitUntilExit()`: it holds one of the few threads Swift's concurrency runs every test
/// on (two on a 2-core machine) for as long as the program runs, and forever if it never ends; two such
/// waits stop every other test of the run. Here a program that outlives its limit is killed with its
/// process group, the test fails saying so, and the run goes on.
public enum ExternalProgram {
    public struct Result: Sendable {
        /// The exit status, 128 + the signal that ended it, or -1 when it outlived its limit.
        public var status: Int32
        public var output: String
        public var errorOutput: String
        /// Whether it was killed for outliving its limit.
        public var timedOut: Bool
    }

    /// Closes this process's copies of the files a started child was given (the child holds its own).
    ///
    /// Why: `Process` keeps them open for as long as it lives, and a whole test run leaked about 1,900
    /// descriptors so; swift-corelibs-foundation's `Process.run()` reads `/proc/self/fd` with a 256-byte
    /// over-read of each entry, which crashes once that listing fills glibc's buffer (the test process
    /// died so in `Process.run()`, in `__memcpy`; swift-corelibs-foundation pull request 5472).
    public static func closeAfterStart(_ files: FileHandle...) { closeAfterStart(files) }

    public static func closeAfterStart(_ files: [FileHandle]) {
        for file in files { try? file.close() }  // a close that fails leaves nothing to do
    }

    /// Runs `executable` with `arguments`; its standard input is `/dev/null` unless `input` names a file.
    /// Its output and error output go to files, not pipes, so a process it leaves behind holding them cannot
    /// keep the test waiting. A program still running after `limit` is a recorded failure.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                           in directory: String? = nil, input: String? = nil,
                           within limit: Duration = .seconds(120)) async -> Result {
        let files: ScratchDirectory
        do { files = try ScratchDirectory("jobgraph-program") } catch {
            Issue.record("cannot make a folder for the output of \(executable): \(error)")
            return Result(status: -1, output: "", errorOutput: "", timedOut: false)
        }
        defer { files.remove() }
        let process = Process()
        let (exit, continuation) = AsyncStream.makeStream(of: Int32.self)
        do {
            try files.write("", to: "out")
            try files.write("", to: "err")
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            if let environment { process.environment = environment }
            if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
            let inputFile = try input.map { try FileHandle(forReadingFrom: URL(fileURLWithPath: $0)) }
            let output = try FileHandle(forWritingTo: URL(fileURLWithPath: files.file("out")))
            let errors = try FileHandle(forWritingTo: URL(fileURLWithPath: files.file("err")))
            process.standardInput = inputFile ?? FileHandle.nullDevice
            process.standardOutput = output
            process.standardError = errors
            process.terminationHandler = { process in
                continuation.yield(process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus)
                continuation.finish()
            }
            defer { closeAfterStart([inputFile, output, errors].compactMap { $0 }) }
            try process.run()
        } catch {
            Issue.record("cannot run \(executable): \(error)")
            return Result(status: -1, output: "", errorOutput: "", timedOut: false)
        }
        let pid = process.processIdentifier
        let status = await firstValue(of: exit, within: limit)
        let timedOut = status == nil
        if timedOut {
            // Foundation starts it in a process group of its own.
            kill(-pid, SIGKILL)
            kill(pid, SIGKILL)
            // Its exit is seen once every holder of Foundation's socket has gone; one that escaped the
            // group may not, and the test is not kept waiting for it.
            _ = await eventually(within: .seconds(10)) { !process.isRunning }
            Issue.record("\(executable) \(arguments.joined(separator: " ")) was still running after \(limit) and was killed")
        }
        return Result(status: timedOut ? -1 : status ?? -1, output: files.read("out") ?? "",
                      errorOutput: files.read("err") ?? "", timedOut: timedOut)
    }

    /// `python3 -c script arguments…` to its end; an exit other than 0 is a recorded failure showing what
    /// it wrote to standard error.
    /// - Returns: its standard output, without surrounding white space.
    @discardableResult
    public static func python(_ script: String, _ arguments: [String] = [], in directory: String? = nil,
                              within limit: Duration = .seconds(120)) async -> String {
        let result = await run("/usr/bin/env", ["python3", "-c", script] + arguments, in: directory, within: limit)
        if result.status != 0, !result.timedOut { Issue.record("python3 exited with \(result.status): \(result.errorOutput)") }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The stream's first value, or `nil` when none came within `limit`.
    private static func firstValue(of stream: AsyncStream<Int32>, within limit: Duration) async -> Int32? {
        await withTaskGroup(of: Int32?.self) { group in
            group.addTask {
                for await value in stream { return value }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
