import JobGraphBasics

/// What a replay record keeps of the pipeline file it was made from: the file's length and the XXH64 of
/// its bytes, which a rerun compares with the file as it is, and the digest of what the file says
/// (`Pipeline.contentDigest`), which a rerun whose file has other bytes compares once it loaded the file.
///
/// Why not the bytes themselves: kept in the record, a pipeline of 100,000 tasks (11.5 MB) was half of its
/// row, which SQLite wrote, later read past and freed on every rerun that checked its tasks (perf: the
/// record took 0.2 s to keep). XXH64 reads that file in under a millisecond.
public struct PipelineFileDigest: Sendable, Equatable {
    public var length: Int64
    public var hash: UInt64
    /// What the file says, known once it is loaded: the same for a file whose comments or layout changed.
    public var content: UInt64?

    public init(of bytes: [UInt8], content: UInt64? = nil) {
        length = Int64(bytes.count)
        hash = XXH64.hash(bytes)
        self.content = content
    }

    init(length: Int64, hash: UInt64, content: UInt64?) {
        self.length = length
        self.hash = hash
        self.content = content
    }

    /// Whether both digests were taken of the same bytes.
    func hasBytes(of other: PipelineFileDigest) -> Bool {
        length == other.length && hash == other.hash
    }
}
