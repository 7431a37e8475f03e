import Foundation
import JobGraphBasics
import PipelineModel

/// Shell completion of task names and their `NAME=` params, read from the pipeline file the command
/// line names (`-f FILE`, a first `.yaml` argument) or the discovered one; nothing when there is none.
enum RunCompletion {
    @Sendable static func candidates(_ words: [String], cursor: Int, prefix: String) -> [String] {
        let before = Array(words.prefix(max(0, min(cursor, words.count))))
        var file: String?
        for (index, word) in before.enumerated() {
            if (word == "-f" || word == "--file"), index + 1 < before.count {
                file = before[index + 1]
            } else if word.hasPrefix("--file=") {
                file = String(word.dropFirst("--file=".count))
            } else if file == nil, PipelineDiscovery.namesFile(word) {
                file = word
            }
        }
        let isFile: (String) -> Bool = { FileManager.default.isReadableFile(atPath: $0) }
        guard let path = file ?? PipelineDiscovery.nearestFile(from: FileManager.default.currentDirectoryPath, isFile: isFile)
        else { return [] }
        var ignored = Diagnostics()  // a file with mistakes completes nothing rather than print them here
        guard let pipeline = PipelineLoader.load(contentsOf: path, diagnostics: &ignored) else { return [] }
        return pipeline.runCompletions(before: before, prefix: prefix)
    }
}
