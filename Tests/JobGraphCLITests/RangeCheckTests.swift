import Foundation
import JobGraphTestSupport
import Testing

/// Every duration and number in the file is range-checked when the file is checked (docs/pipeline.md,
/// "Durations"): a value too large for the clocks is exit 2 with its place, from `validate` and `run` alike,
/// never a trap in the middle of the run (`timeout: 1e16` once died of SIGILL converting to `Int64`).
@Suite(.hangLimit(minutes: 1))
struct RangeCheckTests {
    static let tooLong: [(yaml: String, column: Int, key: String, shown: String)] = [
        ("timeout: 1e16", 14, "timeout", "1e16"),
        ("timeout: 99999999999999999999h", 14, "timeout", "99999999999999999999h"),
        ("timeout: 9223372036854775807", 14, "timeout", "9223372036854775807"),
        ("retry_delay: 1e300", 18, "retry_delay", "1e300"),
        ("service: {ready: {reachable: 127.0.0.1:9}, timeout: 1e16}", 57, "timeout", "1e16"),
        ("slurm: {time: 9223372036854775807-00:00:00}", 19, "time", "9223372036854775807-00:00:00"),
        ("slurm: {time: 2000000:00:00}", 19, "time", "2000000:00:00"),
    ]

    @Test(arguments: tooLong)
    func aDurationLongerThanAYearIsRefusedWithItsPlace(_ value: (yaml: String, column: Int, key: String, shown: String)) async throws {
        let directory = try ScratchDirectory("jobgraph-range")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              test:
                run: echo ran > ran.txt
                \(value.yaml)
            """, to: "p.yaml")
        let expected = "p.yaml:5:\(value.column): error: '\(value.key)' must be at most 8760h (365 days), found '\(value.shown)'"
        for command in ["validate", "run"] {
            let outcome = try await JobGraphBinary.run([command, "p.yaml"], in: directory)
            #expect(outcome.status == 2, "\(command): \(outcome.standardError)")
            #expect(outcome.errorLines.contains(expected), "\(command): \(outcome.errorLines)")
        }
        #expect(!directory.exists("ran.txt"))
    }

    @Test func aYearIsStillAcceptedAndTheTaskRuns() async throws {
        let directory = try ScratchDirectory("jobgraph-range")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              test: {run: "echo ran > ran.txt", timeout: 8760h, retries: 2, retry_delay: 31536000}
            """, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml"], in: directory)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(directory.read("ran.txt") == "ran\n")
    }

    @Test func aResizeLargerThanJPEGsLargestSideIsRefused() async throws {
        let directory = try ScratchDirectory("jobgraph-range")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              shrink: {filter: {input: a.png, output: b.png, effect: resize, width: 9223372036854775807}}
            """, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml"], in: directory)
        #expect(outcome.status == 2)
        #expect(outcome.errorLines.contains { $0.hasPrefix("p.yaml:3:") && $0.contains("'width' must be from 1 to 65535") },
                "\(outcome.errorLines)")
    }
}
