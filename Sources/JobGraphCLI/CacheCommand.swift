import ArgumentParser
import JobGraphBasics
import Foundation
import OutputCache
import Reporters

/// `jobgraph cache`: what the local output cache holds, and making it smaller (docs/cache.md).
struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Show or trim the local output cache.",
        subcommands: [Stats.self, GarbageCollect.self]
    )

    /// The folder from `--cache-dir`, else the default one.
    struct Folder: ParsableArguments {
        @Option(help: ArgumentHelp("The output cache's folder (default: $XDG_CACHE_HOME/jobgraph or ~/.cache/jobgraph).", valueName: "DIR"))
        var cacheDir: String?

        func store() throws -> LocalCacheStore {
            let environment = ProcessInfo.processInfo.environment
            if let cacheDir {
                return LocalCacheStore(directory: cacheDir.hasPrefix("/") ? cacheDir : FileManager.default.currentDirectoryPath + "/" + cacheDir)
            }
            guard let directory = LocalCacheStore.defaultDirectory(environment: environment) else {
                throw ValidationError("neither XDG_CACHE_HOME nor HOME is set; give the cache's folder with '--cache-dir'")
            }
            return LocalCacheStore(directory: directory)
        }
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "stats", abstract: "Show how many entries and bytes the local output cache holds.")

        @OptionGroup var folder: Folder

        func run() async throws {
            let store = try folder.store()
            let statistics = store.statistics()
            Console.standardOutput.write(lines: [
                "cache: \(store.directory)",
                "\(String(counting: statistics.records, "action record")), \(String(counting: statistics.blobs, "blob")), "
                    + ByteSize.text(statistics.bytes),
            ])
        }
    }

    struct GarbageCollect: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "gc", abstract: "Remove the least recently used entries of the local output cache until it fits a size.")

        @OptionGroup var folder: Folder

        @Option(help: ArgumentHelp("The most the cache may keep: bytes, or with K, M, G or T (powers of 1024).", valueName: "SIZE"))
        var maxSize: String

        func validate() throws {
            if ByteSize.parse(maxSize) == nil { throw ValidationError("'--max-size' expects a size such as 5G, 500M or 1024, not '\(maxSize)'") }
        }

        func run() async throws {
            let store = try folder.store()
            let collection = store.collectGarbage(maxBytes: ByteSize.parse(maxSize) ?? 0, now: Int64(Date().timeIntervalSince1970))
            Console.standardOutput.write(line: "removed \(collection.removedEntries) entr\(collection.removedEntries == 1 ? "y" : "ies") "
                + "(\(ByteSize.text(collection.removedBytes))); \(ByteSize.text(collection.keptBytes)) kept")
        }
    }
}
