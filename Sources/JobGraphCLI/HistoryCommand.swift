import ArgumentParser
import Foundation
import PipelineRun
import Reporters
import StateStore

struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Show recent runs: outcome, duration, the slowest tasks and the flaky ones."
    )

    @OptionGroup var source: PipelineSource

    @Flag(help: "Print the history as JSON.")
    var json = false

    @Option(help: "How many recent runs to show.")
    var runs = 10

    func run() async throws {
        let pipeline = try source.resolved()
        let file = pipeline.file
        let directory = pipeline.directory
        guard FileManager.default.fileExists(atPath: StateStore.databasePath(inPipelineDirectory: directory)) else {
            Console.standardOutput.write(line: json ? "{\"runs\":[],\"slowest_tasks\":[],\"flaky_tasks\":[]}" : "no runs of \(file) yet")
            return
        }
        do {
            let store = try StateStore.open(directory: directory)
            if let recovery = store.recovery { Console.standardError.write(line: "warning: \(recovery)") }
            let report = try store.historyReport(pipelineFile: file, runs: runs)
            if json {
                Console.standardOutput.write(String(decoding: try report.jsonData(), as: UTF8.self) + "\n")
            } else {
                Console.standardOutput.write(lines: HistoryText.lines(for: report))
            }
        } catch {
            throw PipelineRunError.history(directory, error)
        }
    }
}
