import JobGraphBasics
import YAMLNodes

/// A replay record whose checks against `state.db` passed (`StateStore.replayCandidate`): the command,
/// the pipeline file, the generation and the source run's rows. What remains needs no database.
public struct ReplayCandidate: Sendable {
    let key: [UInt8]
    let pipeline: PipelineFileDigest
    let generation: Int64
    let sourceRun: RunID
    let taskCount: Int
    /// `NoOpReplayRecord.body` as stored.
    let body: [UInt8]
    /// The content the record was made from, when the file's bytes are not the ones it was made from:
    /// the record holds only if the file still says that (`PipelineFileDigest.content`). `nil` when the
    /// bytes are the record's.
    public let contentToMatch: YAMLContentDigest?

    /// The record, when its body decodes and every path it examined is as it was; else `nil`.
    /// - Parameter content: what the pipeline file says, when `contentToMatch` asks; otherwise unused.
    public func validRecord(content: YAMLContentDigest? = nil) -> NoOpReplayRecord? {
        if let contentToMatch {
            guard content == contentToMatch else { return nil }
        }
        return recordWithPathsUnchanged()
    }

    /// The record, when its body decodes and every path it examined is as it was; else `nil`. The file's
    /// content, when `contentToMatch` asks for it, is left to the caller to compare, meanwhile: the record
    /// it gives names that content.
    /// - Parameter stop: set when the answer is no longer wanted (the content differs): then `nil` soon.
    func recordWithPathsUnchanged(unlessStopped stop: Locked<Bool> = Locked(false)) -> NoOpReplayRecord? {
        var pipeline = self.pipeline
        if let contentToMatch { pipeline.content = contentToMatch }
        guard let decoded = body.withUnsafeBytes(NoOpReplayRecord.decodeBody), decoded.tasks.count == taskCount else { return nil }
        let record = NoOpReplayRecord(key: key, pipeline: pipeline, generation: generation, sourceRun: sourceRun,
                                      pipelineFile: decoded.pipelineFile, outputMode: decoded.outputMode, paths: decoded.paths,
                                      tasks: decoded.tasks, criticalPath: decoded.criticalPath)
        return record.pathsAreUnchanged(unlessStopped: stop) ? record : nil
    }
}
