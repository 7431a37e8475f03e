import ArgumentParser
import JobGraphBasics
import JobGraphSystem
import PipelineModel
import Reporters
import TaskGraph

struct ValidateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a pipeline without running it; print every error as FILE:LINE:COLUMN: error: message."
    )

    @OptionGroup var pipeline: PipelineOptions

    func run() async throws {
        let source = try pipeline.resolved()
        let file = source.file
        let graph = try checkedGraph(pipeline, file: file, fileNeedsIn: source.directory)
        // A task asking more than the file's totals or the machine's memory, as `run` would refuse it
        // without `--resources`; `cpus` against `--jobs` is `run`'s to check, since `validate` has no `--jobs`.
        let declared = graph.pipeline.resources
        let excess = Resources.excessDiagnostics(
            of: graph.nodes.lazy.map(\.spec), totals: Resources.totals(declared: declared, option: nil, machineMemory: MachineMemory.total),
            declared: declared, option: nil, jobs: .max)
        if excess.hasErrors {
            report(excess)
            throw ExitCode(ExitStatus.invalid)
        }
        Console.standardOutput.write(line: "\(file): valid, \(String(counting: graph.nodes.count, "task")), "
            + String(counting: graph.dependencies.totalCount, "dependency", plural: "dependencies"))
        graph.keepUntilExit()
    }
}
