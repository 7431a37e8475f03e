import Foundation
import Execution
import JobGraphBasics

/// One run of a Slurm client command (`sbatch`, `squeue`, `scancel`, `sinfo`, `salloc`), its output captured.
///
/// Blocks the calling thread until the command ends: call it from the executor's own queue or before the
/// run starts, never from a thread that starts tasks.
struct SlurmCommand: Sendable {
    struct Output: Sendable {
        var status: Int32
        var standardOutput: String
        var standardError: String

        var succeeded: Bool { status == 0 }

        /// What Slurm said about a failure, in one line: `sbatch: error: …` lines joined.
        var message: String {
            let lines = (standardError + "\n" + standardOutput).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
            let errors = lines.filter { $0.contains("error") }
            return (errors.isEmpty ? lines : errors).joined(separator: "; ")
        }
    }

    /// The program's absolute path.
    var path: String
    var environment: [String: String]

    /// Runs the command with `arguments` (without the program's name).
    /// - Throws: when it cannot be started at all.
    /// - Parameter niceness: runs the command under `nice`, so that Slurm's `PropagatePrioProcess` gives the
    ///   job's processes that niceness.
    func run(_ arguments: [String], environment override: [String: String]? = nil, niceness: Int32 = 0) throws -> Output {
        let process = Process()
        if niceness > 0 {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/nice")
            process.arguments = ["-n", String(niceness), path] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = arguments
        }
        process.environment = override ?? environment
        let output = try process.runCapturingOutput()
        return Output(status: output.status, standardOutput: output.standardOutput, standardError: output.standardError)
    }
}
