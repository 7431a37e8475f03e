/// What a run's up-to-date pre-pass leaves for recording a replay of its verdict: its evidence, and the
/// status of every path it examined, as it examined them (not a fresh look after the run: a file changed
/// while the run went on must not be trusted).
struct ReplayFindings: Sendable {
    var evidence: ReplayEvidence
    /// Empty unless the evidence allows a replay: gathering 20,000 paths costs a run that cannot use them.
    var paths: [NoOpReplayRecord.ExaminedPath]

    init(_ batch: UpToDateBatch) {
        evidence = batch.replayEvidence
        paths = evidence.isReplayable ? batch.examinedStatuses.map { NoOpReplayRecord.ExaminedPath(path: $0.path, status: $0.status) } : []
    }
}
