import Glibc
import JobGraphSystem
import JobGraphTestSupport
import Testing

@Suite(.hangLimit(minutes: 1)) struct CapturedRunTests {
    private static func shell(_ script: String, in directory: String? = nil) -> SpawnConfiguration {
        SpawnConfiguration(executablePath: "/bin/sh", arguments: ["/bin/sh", "-c", script], environment: testEnvironment,
                           workingDirectory: directory)
    }

    @Test func standardOutputAndStandardErrorAreCapturedApart() throws {
        let run = try CapturedRun.run(Self.shell("echo out; echo err >&2; echo more; exit 3"))
        #expect(String(decoding: run.standardOutput, as: UTF8.self) == "out\nmore\n")
        #expect(String(decoding: run.standardError, as: UTF8.self) == "err\n")
        #expect(run.status == .exited(code: 3))
    }

    /// Both pipes are read as they fill: a command that writes a megabyte to each, error first, does not
    /// wait forever on a full pipe.
    @Test func largeOutputsOnBothStreamsAreReadToTheEnd() throws {
        let run = try CapturedRun.run(Self.shell("head -c 1048576 /dev/zero >&2; head -c 1048576 /dev/zero"))
        #expect(run.standardOutput.count == 1 << 20 && run.standardError.count == 1 << 20)
        #expect(run.status == .exited(code: 0))
    }

    @Test func aSignalledCommandSaysWhichSignal() throws {
        let run = try CapturedRun.run(Self.shell("kill -TERM $$"))
        #expect(run.status == .signalled(signal: SIGTERM, coreDumped: false))
        #expect(run.status.shellStatus == 143)
    }

    @Test func theCommandRunsInItsFolderWithNothingOnItsInput() throws {
        let directory = try ScratchDirectory("jobgraph-captured")
        defer { directory.remove() }
        let run = try CapturedRun.run(Self.shell("pwd; cat; echo read-nothing", in: directory.path))
        #expect(String(decoding: run.standardOutput, as: UTF8.self) == directory.path + "\nread-nothing\n")
    }

    @Test func aProgramThatCannotStartThrowsItsError() {
        let missing = SpawnConfiguration(executablePath: "/nonexistent/program", arguments: ["program"], environment: testEnvironment)
        #expect(throws: SystemError.self) { try CapturedRun.run(missing) }
    }
}
