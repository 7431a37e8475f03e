import ArgumentParser
import Foundation
import Reporters
import SlurmExecutor
import StateStore

/// `jobgraph cancel [FILE]`: cancels the Slurm jobs a killed run of the pipeline left behind, starting
/// nothing (docs/pipeline.md, "Reattach").
struct CancelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Cancel the Slurm jobs a killed run of the pipeline left behind; start nothing."
    )

    @OptionGroup var source: PipelineSource

    func run() async throws {
        let pipeline = try source.resolved()
        let nothing = "nothing to cancel: no run of \(pipeline.file) went to Slurm"
        guard FileManager.default.fileExists(atPath: StateStore.databasePath(inPipelineDirectory: pipeline.directory)) else {
            Console.standardOutput.write(line: nothing)
            return
        }
        let lines: [String]
        do {
            let store = try StateStore.open(directory: pipeline.directory, pipelineFile: pipeline.file)
            if let recovery = store.recovery { Console.standardError.write(line: "warning: \(recovery)") }
            // A run going on holds the lock, and cancels its own jobs as Ctrl-C or SIGTERM stops it.
            let lock: RunLock
            do {
                lock = try store.acquireRunLock(for: pipeline.file)
            } catch StateStoreError.runLockHeld(let pid) {
                let holder = pid.map { "pid \($0)" } ?? "another process"
                Console.standardError.write(line: "error: a run of \(pipeline.file) is going on (\(holder)); stop it with Ctrl-C"
                                            + (pid.map { " or 'kill \($0)'" } ?? "") + ", which cancels its jobs")
                throw ExitCode(ExitStatus.invalid)
            }
            defer { lock.release() }
            lines = try SlurmExecutor.cancelLeftBehind(ledger: store.jobLedger(pipelineFile: pipeline.file),
                                                       environment: ProcessInfo.processInfo.environment)
        } catch let error as SlurmSetupError {
            Console.standardError.write(lines: error.problems.map { "error: \($0)" })
            throw ExitCode(ExitStatus.invalid)
        } catch let exit as ExitCode {
            throw exit
        } catch {
            Console.standardError.write(line: "error: \(error)")
            throw ExitCode(ExitStatus.invalid)
        }
        Console.standardOutput.write(lines: lines)
    }
}
