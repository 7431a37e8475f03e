import ArgumentParser
import Foundation
import PipelineModel
import Reporters

/// Which pipeline file a command reads: `-f FILE`, a first argument naming a YAML file, or else the
/// nearest `jobgraph.yaml` (or `jobgraph.yml`) in the working folder or a parent.
struct PipelineSource: ParsableArguments {
    @Option(name: [.customShort("f"), .customLong("file")],
            help: ArgumentHelp("The pipeline file (default: jobgraph.yaml or jobgraph.yml here or in the nearest parent folder).",
                               valueName: "FILE"),
            completion: .file(extensions: ["yaml", "yml"]))
    var explicitFile: String?

    @Argument(help: ArgumentHelp("The pipeline file, when no -f is given (a path ending in .yaml or .yml).", valueName: "file"),
              completion: .file(extensions: ["yaml", "yml"]))
    var firstArgument: String?

    /// The file to read and the task names the command line gives.
    ///
    /// With `-f`, every argument is a task; without it, a first argument naming a YAML file is the file,
    /// as before discovery existed. A discovered file is announced on standard error, since which file
    /// ran is not obvious from the command line. No file found is a command-line error (exit 2).
    /// - Parameter tasks: the command's TASK arguments; `nil` for a command that takes none, whose one
    ///   argument is then always the file.
    func resolved(tasks: [String]? = nil) throws -> ResolvedPipeline {
        if let explicitFile {
            if tasks == nil, let firstArgument {
                Console.standardError.write(line: "error: unexpected argument '\(firstArgument)': -f already names the pipeline file")
                throw ExitCode(ExitStatus.invalid)
            }
            return ResolvedPipeline(file: explicitFile, tasks: (firstArgument.map { [$0] } ?? []) + (tasks ?? []))
        }
        if let firstArgument, tasks == nil || PipelineDiscovery.namesFile(firstArgument) {
            return ResolvedPipeline(file: firstArgument, tasks: tasks ?? [])
        }
        let directory = FileManager.default.currentDirectoryPath
        guard let file = PipelineDiscovery.nearestFile(from: directory, isFile: Self.isRegularFile) else {
            let names = PipelineDiscovery.fileNames.joined(separator: " or ")
            Console.standardError.write(line: "error: no \(names) in '\(directory)' or any folder above it; name the pipeline file with -f FILE")
            throw ExitCode(ExitStatus.invalid)
        }
        Console.standardError.write(line: "jobgraph: using \(file)")
        return ResolvedPipeline(file: file, tasks: (firstArgument.map { [$0] } ?? []) + (tasks ?? []))
    }

    private static func isRegularFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
    }
}

/// A command's pipeline file and task names, once `-f`, the arguments and discovery are settled.
struct ResolvedPipeline {
    /// The path as the user typed it, or relative to the working folder when discovered.
    var file: String
    var tasks: [String]

    /// The folder holding the file, absolute: where tasks run and `.jobgraph/` lives.
    var directory: String { URL(fileURLWithPath: file).deletingLastPathComponent().standardizedFileURL.path }
}
