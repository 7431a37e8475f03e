import ArgumentParser
import Execution
import Foundation
import OutputCache
import TaskGraph

/// The output cache's options of `run` and `explain` (docs/cli.md, docs/cache.md).
struct CacheOptions: ParsableArguments {
    @Flag(help: "Neither restore from nor store in the output cache.")
    var noCache = false

    @Option(help: ArgumentHelp("The output cache's folder (default: the file's 'cache_dir', else $XDG_CACHE_HOME/jobgraph or ~/.cache/jobgraph).",
                               valueName: "DIR"))
    var cacheDir: String?

    @Option(help: ArgumentHelp("A remote output cache speaking Bazel's HTTP cache protocol; overrides 'remote_cache: url' in the file.",
                               valueName: "URL"))
    var remoteCache: String?

    func validate() throws {
        if let remoteCache, !(remoteCache.hasPrefix("http://") || remoteCache.hasPrefix("https://")) {
            throw ValidationError("'--remote-cache' expects an http or https URL, not '\(remoteCache)'")
        }
    }

    /// The run's cache settings; `nil` under `--no-cache`.
    func settings(for graph: TaskGraph, configuration: RunConfiguration) -> OutputCacheSettings? {
        guard !noCache else { return nil }
        return OutputCacheSettings.resolved(pipeline: graph.pipeline, pipelineDirectory: configuration.pipelineDirectory, directory: cacheDir,
                                            remoteURL: remoteCache, workingDirectory: FileManager.default.currentDirectoryPath,
                                            environment: ProcessInfo.processInfo.environment)
    }
}
