import Execution
import JobGraphBasics
import JobGraphSystem

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
    /// - Parameter niceness: the command's niceness, so that Slurm's `PropagatePrioProcess` gives the job's
    ///   processes that niceness.
    func run(_ arguments: [String], environment override: [String: String]? = nil, niceness: Int32 = 0) throws -> Output {
        let environment = (override ?? environment).map { "\($0.key)=\($0.value)" }
        let run = try CapturedRun.run(SpawnConfiguration(executablePath: path, arguments: [path] + arguments,
                                                         environment: environment, niceness: niceness))
        return Output(status: run.status.shellStatus, standardOutput: String(decoding: run.standardOutput, as: UTF8.self),
                      standardError: String(decoding: run.standardError, as: UTF8.self))
    }
}
