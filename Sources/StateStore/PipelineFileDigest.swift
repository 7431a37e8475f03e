import JobGraphBasics

/// What a replay record keeps of the pipeline file it was made from: the file's length and the XXH64 of
/// its bytes, which a rerun compares with the file as it is.
///
/// Why not the bytes themselves: kept in the record, a pipeline of 100,000 tasks (11.5 MB) was half of its
/// row, which SQLite wrote, later read past and freed on every rerun that checked its tasks (perf: the
/// record took 0.2 s to keep). XXH64 reads that file in under a millisecond.
public struct PipelineFileDigest: Sendable, Equatable {
    public var length: Int64
    public var hash: UInt64

    public init(of bytes: [UInt8]) {
        length = Int64(bytes.count)
        hash = XXH64.hash(bytes)
    }

    init(length: Int64, hash: UInt64) {
        self.length = length
        self.hash = hash
    }
}
