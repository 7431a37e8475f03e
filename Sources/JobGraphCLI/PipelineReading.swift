import ArgumentParser
import Execution
import Foundation
import JobGraphBasics
import PipelineModel
import Reporters
import TaskGraph

/// Loads and checks the pipeline for a command, printing every diagnostic; a pipeline with errors ends
/// the command with exit status 2 (contract: "Exit codes").
/// - Parameter fileNeedsIn: the pipeline's folder, to add the needs its files imply and warn where tasks may
///   race over files (`validate`); `nil` adds none.
func checkedGraph(_ options: PipelineOptions, file: String, fileNeedsIn directory: String? = nil) throws -> TaskGraph {
    var diagnostics = Diagnostics()
    var graph = PipelineCheck.graph(contentsOf: file, variableOverrides: options.variableOverrides, diagnostics: &diagnostics)
    if let directory, let whole = graph, !diagnostics.hasErrors {
        graph = whole.resolvingFiles(pipelineDirectory: directory, warnings: [.overlappingGlobs, .sharedOutputs], diagnostics: &diagnostics)
    }
    report(diagnostics)
    guard let graph, !diagnostics.hasErrors else { throw ExitCode(ExitStatus.invalid) }
    return graph
}

/// Resolves the pipeline file and the task names (see `PipelineSource`), then loads and checks the
/// file and selects the named tasks and what they need; every problem is printed and ends the command
/// with exit status 2.
/// - Parameters:
///   - forRun: binds the tasks' params and runs `sh` variables, as a run would.
///   - previewingLists: the graph is shown, not run: see `reportedSelection`.
func checkedSelection(
    _ options: PipelineOptions, tasks: [String], forRun: Bool = false, previewingLists: Bool = false
) throws -> (source: ResolvedPipeline, graph: TaskGraph) {
    let source = try options.resolved(tasks: tasks)
    guard let graph = reportedSelection(source, variableOverrides: options.variableOverrides, forRun: forRun, previewingLists: previewingLists) else {
        throw ExitCode(ExitStatus.invalid)
    }
    return (source, graph)
}

/// Loads and checks the pipeline file and selects what a run runs (the named tasks, else the default ones,
/// with what they need), printing every problem; `nil` when there was an error.
/// - Parameters:
///   - forRun: runs the `sh` variables and binds the `NAME=VALUE` words to the tasks' params
///     (docs/cli.md, "run"); otherwise those words only select their tasks.
///   - previewingLists: the graph is shown, not run (`--dry-run`, `graph`, `explain`): the `from:` lists that
///     no task writes are read now, also those a run reads once their task's needs are done
///     (docs/pipeline.md, "foreach").
func reportedSelection(
    _ source: ResolvedPipeline, variableOverrides: [String: String], forRun: Bool = true, previewingLists: Bool = false
) -> TaskGraph? {
    var diagnostics = Diagnostics()
    let arguments = TaskArguments(source.tasks, diagnostics: &diagnostics)
    let commands = forRun
        ? VariableCommands.runner(in: source.directory, environment: ProcessInfo.processInfo.environment) : nil
    var graph = diagnostics.hasErrors ? nil
        : PipelineCheck.graph(contentsOf: source.file, variableOverrides: variableOverrides, variableCommands: commands, diagnostics: &diagnostics)
    // Before the selection, so that naming a task brings in what writes its inputs.
    if let whole = graph, !diagnostics.hasErrors {
        graph = whole.resolvingFiles(pipelineDirectory: source.directory, warnings: .sharedOutputs, previewingLists: previewingLists,
                                     diagnostics: &diagnostics)
    }
    // A run that names no task runs the file's `default:`, else every task that is not `manual`.
    if let whole = graph, !diagnostics.hasErrors {
        graph = arguments.names.isEmpty ? whole.defaultSelection(diagnostics: &diagnostics)
            : whole.selecting(arguments.names, diagnostics: &diagnostics)
    }
    if forRun, let selected = graph, !diagnostics.hasErrors {
        graph = selected.binding(
            arguments, invocationDirectory: FileManager.default.currentDirectoryPath, pipelineDirectory: source.directory,
            diagnostics: &diagnostics)
    }
    report(diagnostics)
    return diagnostics.hasErrors ? nil : graph
}

/// Prints a warning to standard error.
func warn(_ line: String) {
    Console.standardError.write(line: "warning: " + line)
}

/// Prints diagnostics to standard error; on a terminal with the source line and a caret.
func report(_ diagnostics: Diagnostics) {
    guard !diagnostics.all.isEmpty else { return }
    let console = Console.standardError
    let interactive = console.isInteractiveTerminal(environment: ProcessInfo.processInfo.environment)
    let printer = DiagnosticPrinter(sourceLines: interactive ? SourceLineReader().line(at:) : nil)
    var lines = printer.render(diagnostics)
    if interactive, let count = printer.errorCountLine(diagnostics) { lines.append(count) }
    console.write(lines: lines)
}

/// Reads source lines for diagnostics shown on a terminal.
private struct SourceLineReader: Sendable {
    @Sendable func line(at location: SourceLocation) -> String? {
        guard let data = FileManager.default.contents(atPath: location.file) else { return nil }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard location.line >= 1, location.line <= lines.count else { return nil }
        return String(lines[location.line - 1])
    }
}
