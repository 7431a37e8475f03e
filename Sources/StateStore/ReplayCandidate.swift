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

    /// The record, when its body decodes and every path it examined is as it was; else `nil`.
    public func validRecord() -> NoOpReplayRecord? {
        guard let decoded = body.withUnsafeBytes(NoOpReplayRecord.decodeBody), decoded.tasks.count == taskCount else { return nil }
        let record = NoOpReplayRecord(key: key, pipeline: pipeline, generation: generation, sourceRun: sourceRun,
                                      pipelineFile: decoded.pipelineFile, outputMode: decoded.outputMode, paths: decoded.paths,
                                      tasks: decoded.tasks, criticalPath: decoded.criticalPath)
        return record.pathsAreUnchanged() ? record : nil
    }
}
