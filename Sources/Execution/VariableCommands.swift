import Foundation
import JobGraphBasics
import PipelineModel

/// Runs the commands of `sh` variables while a pipeline loads for a run (docs/pipeline.md, "Variables
/// from commands"): each with `/bin/sh -c` in the pipeline's folder, standard input closed, both outputs
/// captured. Blocks the calling thread until the command ends; call it before the run starts.
public enum VariableCommands {
    /// A runner for the pipeline in `directory`, giving commands the caller's `environment`.
    public static func runner(in directory: String, environment: [String: String]) -> VariableCommandRunner {
        { command in run(command, in: directory, environment: environment) }
    }

    static func run(_ command: String, in directory: String, environment: [String: String]) -> VariableCommandOutput {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.environment = environment
        do {
            let output = try process.runCapturingOutput()
            let status = process.terminationReason == .exit ? output.status : 128 + output.status
            return VariableCommandOutput(status: status, standardOutput: output.standardOutput, standardError: output.standardError)
        } catch {
            return VariableCommandOutput(status: nil, standardOutput: "", standardError: "\(error)")
        }
    }
}

extension Process {
    /// Runs the process with standard input closed and both outputs captured, and waits for it to end.
    /// Blocks the calling thread.
    /// - Throws: when it cannot be started at all.
    public func runCapturingOutput() throws -> (status: Int32, standardOutput: String, standardError: String) {
        standardInput = FileHandle.nullDevice
        let output = Pipe(), errors = Pipe()
        standardOutput = output
        standardError = errors
        try run()
        // Read both to the end before waiting, so a chatty command never blocks on a full pipe.
        let errorData = Locked(Data())
        let errorRead = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            errorData.withLock { $0 = data }
            errorRead.signal()
        }
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        errorRead.wait()
        waitUntilExit()
        return (terminationStatus, String(decoding: outputData, as: UTF8.self), String(decoding: errorData.withLock { $0 }, as: UTF8.self))
    }
}
