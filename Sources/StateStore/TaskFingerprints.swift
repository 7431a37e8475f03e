/// What a task's success is recorded with, to judge later whether it is up to date: its definition
/// fingerprint and the content hash of every input file it had.
public struct TaskFingerprints: Sendable, Equatable {
    /// One input file.
    public struct Input: Sendable, Equatable {
        /// Relative to the pipeline's folder when inside it, else absolute.
        public var path: String
        /// Lower-case hex SHA-256 of the content; empty when the file could not be read.
        public var sha256: String

        public init(path: String, sha256: String) {
            self.path = path
            self.sha256 = sha256
        }
    }

    /// `TaskDefinition.fingerprint`.
    public var definition: String
    /// Sorted by path (bytes).
    public var inputs: [Input]
    /// `TaskDefinition.canonicalEncoding`, stored with a success so a later check can name what changed;
    /// `nil` when not known (read back from the store, which gives it only on demand).
    public var definitionText: String?

    public init(definition: String, inputs: [Input], definitionText: String? = nil) {
        self.definition = definition
        self.inputs = inputs
        self.definitionText = definitionText
    }
}
