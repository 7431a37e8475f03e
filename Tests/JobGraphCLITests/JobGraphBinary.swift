import Foundation
import JobGraphTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The built `jobgraph` executable, run as a user would run it: a separate process with arguments, a
/// working directory and an environment, observed through its exit status, output and files.
enum JobGraphBinary {
    /// The environment the binary gets: no `TERM`, so `--progress auto` prints plain lines.
    ///
    /// When `swift test --sanitize=thread` built the binary too, it gets the `TSAN_OPTIONS` this test
    /// process was given (`.ci/test`: `halt_on_error=1`), so a race inside `jobgraph` ends it with
    /// ThreadSanitizer's status, 66; `RunningJobGraph.finish` also fails the test on any report in its
    /// standard error, whatever the status.
    static let environment: [String: String] = {
        var environment = ["PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C"]
        if let options = ProcessInfo.processInfo.environment["TSAN_OPTIONS"] { environment["TSAN_OPTIONS"] = options }
        return environment
    }()

    /// The first lines of a ThreadSanitizer report in `standardError`, or `nil` when there is none.
    static func sanitizerReport(in standardError: String) -> String? {
        guard let start = standardError.range(of: "ThreadSanitizer") else { return nil }
        let lines = standardError[standardError.lineRange(for: start).lowerBound...]
            .split(separator: "\n", omittingEmptySubsequences: false)
        return lines.prefix(40).joined(separator: "\n")
    }

    /// `jobgraph` beside the test bundle in the build's products directory (`swift build` and `swift test`
    /// build it there), or the file `JOBGRAPH_BINARY` names.
    static func location() throws -> URL {
        if let override = ProcessInfo.processInfo.environment["JOBGRAPH_BINARY"] {
            return URL(fileURLWithPath: override)
        }
        let testExecutable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let candidates = [
            testExecutable.deletingLastPathComponent().appendingPathComponent("jobgraph"),
            Bundle.main.bundleURL.appendingPathComponent("jobgraph"),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("jobgraph"),
        ]
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) { return found }
        let message = "the jobgraph executable is not built: looked for \(candidates.map(\.path)); run `swift build` "
            + "first, or set JOBGRAPH_BINARY to its path"
        Issue.record(Comment(rawValue: message))
        throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: message])
    }

    /// Starts `jobgraph arguments…` in `directory`; its output goes to files there.
    static func start(_ arguments: [String], in directory: ScratchDirectory,
                      environment: [String: String] = JobGraphBinary.environment) throws -> RunningJobGraph {
        try RunningJobGraph(executable: location(), arguments: arguments, directory: directory, environment: environment)
    }

    /// Runs `jobgraph arguments…` in `directory` to its end.
    static func run(_ arguments: [String], in directory: ScratchDirectory,
                    environment: [String: String] = JobGraphBinary.environment) async throws -> Outcome {
        try await start(arguments, in: directory, environment: environment).finish()
    }

    /// How a finished `jobgraph` ended and what it printed.
    struct Outcome {
        /// The exit status, or 128 + the signal that ended it.
        var status: Int32
        var standardOutput: String
        var standardError: String

        var outputLines: [String] { Self.lines(standardOutput) }
        var errorLines: [String] { Self.lines(standardError) }

        private static func lines(_ text: String) -> [String] {
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if lines.last == "" { lines.removeLast() }
            return lines
        }
    }
}

/// A `jobgraph` process started by a test, its standard output and error written to files in `directory`.
final class RunningJobGraph {
    let directory: ScratchDirectory
    private let process = Process()
    private let exit: AsyncStream<Int32>
    private let outputName: String
    private let errorName: String
    private let arguments: [String]
    /// An atomic, not a `Mutex`: ThreadSanitizer misreads the toolchain's `Mutex` handing over a contended
    /// lock as a race (see `JobGraphBinary.environment`), and tests start binaries concurrently.
    private static let started = Atomic(0)

    init(executable: URL, arguments: [String], directory: ScratchDirectory, environment: [String: String]) throws {
        self.directory = directory
        self.arguments = arguments
        let number = Self.started.add(1, ordering: .relaxed).newValue
        outputName = "jobgraph-\(number).stdout"
        errorName = "jobgraph-\(number).stderr"
        try directory.write("", to: outputName)
        try directory.write("", to: errorName)
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory.path)
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: directory.file(outputName)))
        let errors = try FileHandle(forWritingTo: URL(fileURLWithPath: directory.file(errorName)))
        process.standardOutput = output
        process.standardError = errors
        let (exit, continuation) = AsyncStream.makeStream(of: Int32.self)
        self.exit = exit
        process.terminationHandler = { process in
            let status = process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
            continuation.yield(status)
            continuation.finish()
        }
        defer { ExternalProgram.closeAfterStart(output, errors) }
        try process.run()
    }

    /// A test that ends before `finish()` (a failed `#require`) ends the jobgraph it started, which ends its
    /// tasks (continued first, should the test have stopped it): a failed JobControlTests left its run and
    /// two polling tasks running for 44 minutes, beside the benchmarks.
    deinit {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        kill(process.processIdentifier, SIGCONT)
    }

    var pid: pid_t { process.processIdentifier }

    /// Sends `signal` to the process.
    func send(_ signal: Int32) {
        kill(pid, signal)
    }

    /// Everything it has written to standard output so far.
    var standardOutput: String { directory.read(outputName) ?? "" }

    /// Everything it has written to standard error so far.
    var standardError: String { directory.read(errorName) ?? "" }

    /// The JSON objects of an events file written so far, one per complete line.
    func events(in file: String) -> [[String: Any]] {
        guard let text = directory.read(file) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            // A line still being written is no JSON yet; the next look reads it again.
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        }
    }

    /// Waits until the events file shows `count` transitions to `state`.
    func waitForTransitions(to state: String, count: Int = 1, in file: String) async -> Bool {
        await eventually { events(in: file).filter { $0["to"] as? String == state }.count >= count }
    }

    /// Waits until standard output holds `text`.
    func waitForOutput(containing text: String) async -> Bool {
        await eventually { standardOutput.contains(text) }
    }

    /// Waits for the exit; a process still running after `limit` (a hang guard: by default 50 s, times
    /// `TestBuild.hangGuardFactor`) is killed and the test fails.
    func finish(within limit: Duration = .seconds(50 * TestBuild.hangGuardFactor)) async throws -> JobGraphBinary.Outcome {
        let pid = self.pid
        let hangGuard = Task { () -> Bool in
            do { try await Task.sleep(for: limit) } catch { return false }
            kill(pid, SIGKILL)
            return true
        }
        var status: Int32 = -1
        for await code in exit { status = code }
        if status == -1 { kill(pid, SIGKILL) }  // the test was cancelled: leave nothing running
        hangGuard.cancel()
        let hung = await hangGuard.value
        #expect(!hung, "jobgraph did not exit within \(limit) and was killed")
        let standardError = directory.read(errorName) ?? ""
        if let report = JobGraphBinary.sanitizerReport(in: standardError) {
            Issue.record("ThreadSanitizer reported a problem inside jobgraph \(arguments):\n\(report)")
        }
        return JobGraphBinary.Outcome(status: status, standardOutput: standardOutput, standardError: standardError)
    }
}
