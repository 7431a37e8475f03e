/// What one task's up-to-date check examined, kept for a replay record made after the run: the status of
/// each input file when its hash was taken, and the task's outputs. A build that ends with every task done
/// records from these (`BuildEvidence`) the verdict its rerun would reach, so that rerun can replay it.
///
/// Only for a task whose inputs and outputs are all named outright, with every input an existing regular
/// file: a pattern, a folder or a missing input leaves the rerun something to find that these do not say.
public struct CheckedPaths: Sendable, Equatable {
    struct Input: Sendable, Equatable {
        /// The store's key of the file (`StateStore.fileKey`).
        var key: String
        var status: FileStatus
    }

    var inputs: [Input]
    /// The store's keys of the outputs.
    var outputs: [String]

    /// - Parameters:
    ///   - files: the input files the check hashed, with their keys, when each input named one of them outright
    ///     (`Fingerprinter.filesNamed`); `statuses`, the status each hash was taken at.
    ///   - outputPaths: the path each output pattern names (`Fingerprinter.literalPath`); `nil` for a pattern
    ///     with wildcards, which leaves nothing to keep.
    init?(files: [(key: String, path: String)], statuses: [FileStatus], outputPaths: [String?], key: (String) -> String) {
        guard statuses.count == files.count else { return nil }
        var outputs: [String] = []
        outputs.reserveCapacity(outputPaths.count)
        for path in outputPaths {
            guard let path else { return nil }
            outputs.append(key(path))
        }
        inputs = zip(files, statuses).map { Input(key: $0.key, status: $1) }
        self.outputs = outputs
    }
}
