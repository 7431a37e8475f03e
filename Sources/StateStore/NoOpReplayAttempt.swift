#if canImport(Glibc)
import Glibc
#endif
import Execution
import Foundation
import JobGraphBasics
import PipelineModel
import YAMLNodes

/// A `jobgraph run` that may replay the previous verdict "every selected task is up to date" instead of
/// loading the pipeline and checking its tasks (docs/state.md), and that records such a verdict after a
/// run for the next one. Which commands qualify is the command line's to say (a plain run: not `--force`,
/// `--dry-run`, `--watch`, `--explain`, `--trace` or `--executor slurm`); what identifies one, and when a
/// record holds, is decided here.
public struct NoOpReplayAttempt {
    /// What identifies the command: see `NoOpReplayRecord.key`.
    let key: [UInt8]
    /// The pipeline file as it was before the run loaded it; the run loads these bytes, so that the
    /// verdict it records is on what it loaded.
    public let pipelineBytes: [UInt8]?
    /// What a replay record keeps of it.
    let pipeline: PipelineFileDigest?
    let pipelineFile: String
    /// Gathers what a replay of the run would send: one of the run's observers.
    public let capture = NoOpReplayCapture()

    /// - Parameters:
    ///   - pipelineFile: as the user typed it (or as it was discovered).
    ///   - tasks: the tasks named on the command line, in their order.
    ///   - variables: the `--var NAME=VALUE` arguments.
    ///   - executor: the `--executor` given, or "" for none.
    ///   - workingDirectory: the process's, which relative paths on the command line are read from.
    public init(pipelineFile: String, tasks: [String], variables: [String], executor: String, workingDirectory: String) {
        let arguments = ["file", pipelineFile, "tasks"] + tasks + ["vars"] + variables.sorted() + ["executor", executor]
        key = NoOpReplayRecord.key(version: JobGraphVersion.current + " " + Self.binaryIdentity(),
                                   workingDirectory: workingDirectory, arguments: arguments)
        self.pipelineFile = pipelineFile
        pipelineBytes = PipelineLoader.bytes(ofFile: pipelineFile)
        pipeline = pipelineBytes.map { PipelineFileDigest(of: $0) }
    }

    /// Whether a replay record may exist: the pipeline's `state.db` is there. Without it, the run goes on
    /// as before, and takes its run lock only once the pipeline proved valid.
    public static func mayHaveRecord(pipelineDirectory: String) -> Bool {
        access(StateStore.databasePath(inPipelineDirectory: pipelineDirectory), F_OK) == 0
    }

    /// The record to replay, when it still holds. Once the checks that read `state.db` passed, the oldest
    /// replayed runs are dropped (`StateStore.makeRoomForRun`) while the record's paths are examined.
    ///
    /// A record made from other bytes holds when the file still says what it said then (an edit of its
    /// comments or layout): libyaml reads the file to tell while the paths are examined, and stops at the
    /// first part of the content that differs, which stops the examining too.
    public func validRecord(in store: StateStore) async -> NoOpReplayRecord? {
        guard let pipeline, let candidate = store.replayCandidate(pipelineFile: pipelineFile, key: key, pipeline: pipeline)
        else { return nil }
        let pipelineFile = self.pipelineFile
        // Best effort: a drop that fails is done again when the run begins, and a normal run drops the rest.
        async let roomMade: Void = { try? store.makeRoomForRun(pipelineFile: pipelineFile) }()
        guard let expected = candidate.contentToMatch else {
            let record = candidate.validRecord()
            await roomMade
            return record
        }
        let stop = Locked(false)
        async let examined = candidate.recordWithPathsUnchanged(unlessStopped: stop)
        let saysTheSame = pipelineBytes.map { PipelineLoader.content(of: $0, is: expected) } ?? false
        if !saysTheSame { stop.withLock { $0 = true } }
        let record = await examined
        await roomMade
        return saysTheSame ? record : nil
    }

    /// After a normal run: keeps a record of its verdict when it may be replayed, else forgets any.
    /// - Parameters:
    ///   - eligible: whether the run was one to replay (local executor, no diagnostics, exit 0, no pipeline
    ///     `on_success`).
    ///   - build: what a rerun that finds every task up to date would send, when the run ended with every task
    ///     done; its record spares the rerun after a build its checks. Asked for only when needed.
    ///   - outputMode: the pipeline's `output`, which a replay shows the lines in.
    ///   - content: the `Pipeline.contentDigest` of the pipeline the run loaded (from `pipelineBytes`).
    public func keep(after recorder: RunRecorder, in store: StateStore, eligible: Bool, build: () -> NoOpReplay?,
                     outputMode: OutputMode?, content: YAMLContentDigest?) throws {
        // A pipeline file changed while the run read it could hold a verdict on other bytes.
        let unchanged = eligible && pipelineBytes.map { PipelineLoader.file(pipelineFile, holds: $0) } == true
        var pipeline = self.pipeline
        pipeline?.content = content
        try store.recordReplay(after: recorder, capture: unchanged ? capture : nil, build: { unchanged ? build() : nil },
                               pipelineFile: pipelineFile, key: key, pipeline: pipeline, outputMode: outputMode?.rawValue)
    }

    /// The running binary's size, modification time and inode: a rebuilt jobgraph of the same version may
    /// decide differently, so its records are not replayed.
    private static func binaryIdentity() -> String {
        var info = stat()
        guard stat("/proc/self/exe", &info) == 0 else { return "unknown" }
        return "\(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(info.st_ino)"
    }
}
