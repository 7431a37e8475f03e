import ArgumentParser
import JobGraphBasics

/// The `jobgraph` command and its subcommands.
public struct JobGraphCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "jobgraph",
        abstract: "Run a declarative graph of jobs: shell commands and built-in steps with dependencies, priorities, QoS and queues.",
        version: JobGraphVersion.current,
        subcommands: [RunCommand.self, ValidateCommand.self, GraphCommand.self, ListCommand.self, HistoryCommand.self, ReportCommand.self,
                      ExplainCommand.self, CacheCommand.self, CancelCommand.self]
    )

    public init() {}
}

