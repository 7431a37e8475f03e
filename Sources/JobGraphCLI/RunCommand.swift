import ArgumentParser
import Foundation
import Reporters

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the pipeline, or only the named tasks and what they need."
    )

    @OptionGroup var pipeline: PipelineOptions

    @Argument(help: "Run only these tasks and what they need.")
    var tasks: [String] = []

    @Flag(help: "Check the pipeline and print the plan; run nothing.")
    var dryRun = false

    @Option(help: "Most tasks executing at once overall (default: the number of CPUs).")
    var jobs: Int?

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("'--jobs' must be at least 1") }
    }

    func run() async throws {
        var graph = try checkedGraph(pipeline)
        if !tasks.isEmpty { graph = try selected(tasks, from: graph) }
        let jobs = self.jobs ?? ProcessInfo.processInfo.activeProcessorCount
        if dryRun {
            Console.standardOutput.write(lines: PlanPrinter(jobs: jobs).render(graph, processorCount: ProcessInfo.processInfo.activeProcessorCount))
            return
        }
        Console.standardError.write(line: "error: running pipelines is not available yet; use --dry-run to see the plan")
        throw ExitCode(ExitStatus.invalid)
    }
}
