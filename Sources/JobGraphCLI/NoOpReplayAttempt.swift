#if canImport(Glibc)
import Glibc
#endif
import Execution
import Foundation
import JobGraphBasics
import PipelineModel
import StateStore

/// A `jobgraph run` that may replay the previous verdict "every selected task is up to date" instead of
/// loading the pipeline and checking its tasks (docs/state.md), and that records such a verdict after a
/// run for the next one. Only a plain run qualifies: not `--force`, `--dry-run`, `--watch`, `--explain`,
/// `--trace` or `--executor slurm` (they change what a run does, or show what a replay cannot know).
struct NoOpReplayAttempt {
    /// What identifies the command: see `NoOpReplayRecord.key`.
    let key: [UInt8]
    /// The pipeline file as it was before the run loaded it.
    let pipelineBytes: [UInt8]?
    /// What a replay record keeps of it.
    let pipeline: PipelineFileDigest?
    let pipelineFile: String
    let capture = NoOpReplayCapture()

    /// `nil` when the command's flags rule out a replay.
    init?(_ command: RunCommand, source: ResolvedPipeline) {
        guard !command.force, !command.dryRun, !command.watch, !command.explain, command.trace == nil,
              command.executor != .slurm else { return nil }
        let arguments = ["file", source.file, "tasks"] + source.tasks + ["vars"] + command.pipeline.variables.sorted()
            + ["executor", command.executor?.rawValue ?? ""]
        key = NoOpReplayRecord.key(version: JobGraphVersion.current + " " + Self.binaryIdentity(),
                                   workingDirectory: FileManager.default.currentDirectoryPath, arguments: arguments)
        pipelineFile = source.file
        pipelineBytes = PipelineLoader.bytes(ofFile: source.file)
        pipeline = pipelineBytes.map(PipelineFileDigest.init(of:))
    }

    /// Whether a replay record may exist: the pipeline's `state.db` is there. Without it, the run goes on
    /// as before, and takes its run lock only once the pipeline proved valid.
    static func mayHaveRecord(_ source: ResolvedPipeline) -> Bool {
        access(StateStore.databasePath(inPipelineDirectory: source.directory), F_OK) == 0
    }

    /// The record to replay, when it still holds. Once the checks that read `state.db` passed, the oldest
    /// replayed runs are dropped (`StateStore.makeRoomForRun`) while the record's paths are examined.
    func validRecord(in store: StateStore) async -> NoOpReplayRecord? {
        guard let pipeline, let candidate = store.replayCandidate(pipelineFile: pipelineFile, key: key, pipeline: pipeline)
        else { return nil }
        let pipelineFile = self.pipelineFile
        // Best effort: a drop that fails is done again when the run begins, and a normal run drops the rest.
        async let roomMade: Void = { try? store.makeRoomForRun(pipelineFile: pipelineFile) }()
        let record = candidate.validRecord()
        await roomMade
        return record
    }

    /// After a normal run: keeps a record of its verdict when it may be replayed, else forgets any.
    /// - Parameters:
    ///   - eligible: whether the run was one to replay (local executor, no diagnostics, exit 0, no pipeline
    ///     `on_success`).
    ///   - build: what a rerun that finds every task up to date would send, when the run ended with every task
    ///     done; its record spares the rerun after a build its checks. Asked for only when needed.
    func keep(after recorder: RunRecorder, in store: StateStore, eligible: Bool, build: () -> NoOpReplay?,
              outputMode: OutputMode?) throws {
        // A pipeline file changed while the run read it could hold a verdict on other bytes.
        let unchanged = eligible && pipelineBytes.map { PipelineLoader.file(pipelineFile, holds: $0) } == true
        try store.recordReplay(after: recorder, capture: unchanged ? capture : nil, build: { unchanged ? build() : nil },
                               pipelineFile: pipelineFile, key: key, pipeline: pipeline, outputMode: outputMode?.rawValue)
    }

    /// A replay's exit status, or the signal's when SIGINT or SIGTERM came during it (the replay, which
    /// starts nothing, runs to its end: the run it repeats would have been stopped).
    static func status(_ status: Int32, stoppedBy stop: RunStop?) -> Int32 {
        switch stop {
        case .interrupt?: ExitStatus.interrupted
        case .terminate?: ExitStatus.terminated
        case nil: status
        }
    }

    /// The running binary's size, modification time and inode: a rebuilt jobgraph of the same version may
    /// decide differently, so its records are not replayed.
    private static func binaryIdentity() -> String {
        var info = stat()
        guard stat("/proc/self/exe", &info) == 0 else { return "unknown" }
        return "\(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(info.st_ino)"
    }
}
