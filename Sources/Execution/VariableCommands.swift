import JobGraphBasics
import JobGraphSystem
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
        let configuration = SpawnConfiguration(executablePath: "/bin/sh", arguments: ["/bin/sh", "-c", command],
                                               environment: environment.map { "\($0.key)=\($0.value)" }, workingDirectory: directory)
        do {
            // Ctrl-C or SIGTERM while the pipeline loads stops the command, and stays pending for the command
            // line, which then exits as the signal says.
            let run = try CapturedRun.run(configuration, stoppedBy: [.interrupt, .terminate])
            let errors = String(decoding: run.standardError, as: UTF8.self)
            return VariableCommandOutput(status: run.status.shellStatus, standardOutput: String(decoding: run.standardOutput, as: UTF8.self),
                                         standardError: run.wasStopped ? errors + "\nstopped: jobgraph was interrupted" : errors)
        } catch {
            return VariableCommandOutput(status: nil, standardOutput: "", standardError: "\(error)")
        }
    }
}
