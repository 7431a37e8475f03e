import JobGraphBasics
import YAMLNodes

/// What a replay record keeps of the pipeline file it was made from: the file's length and the XXH64 of
/// its bytes, which a rerun compares with the file as it is, and the digest of what the file says
/// (`Pipeline.contentDigest`), which a rerun whose file has other bytes compares once libyaml read it.
///
/// Why not the bytes themselves: kept in the record, a pipeline of 100,000 tasks (11.5 MB) was half of its
/// row, which SQLite wrote, later read past and freed on every rerun that checked its tasks (perf: the
/// record took 0.2 s to keep). XXH64 reads that file in under a millisecond.
public struct PipelineFileDigest: Sendable, Equatable {
    public var length: Int64
    public var hash: UInt64
    /// What the file says, known once it is read: the same for a file whose comments or layout changed.
    public var content: YAMLContentDigest?

    public init(of bytes: [UInt8], content: YAMLContentDigest? = nil) {
        length = Int64(bytes.count)
        hash = XXH64.hash(bytes)
        self.content = content
    }

    init(length: Int64, hash: UInt64, content: YAMLContentDigest?) {
        self.length = length
        self.hash = hash
        self.content = content
    }

    /// Whether both digests were taken of the same bytes.
    func hasBytes(of other: PipelineFileDigest) -> Bool {
        length == other.length && hash == other.hash
    }
}

extension YAMLContentDigest {
    /// As `noop_replays.pipeline_content` keeps it: each checkpoint in eight bytes, little-endian.
    var storedBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(checkpoints.count * 8)
        for checkpoint in checkpoints { withUnsafeBytes(of: checkpoint.littleEndian) { bytes.append(contentsOf: $0) } }
        return bytes
    }

    /// The digest `storedBytes` were made of; `nil` for bytes that cannot be (none, or not a whole number of eight).
    init?(storedBytes bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty, bytes.count % 8 == 0 else { return nil }
        self.init(checkpoints: stride(from: 0, to: bytes.count, by: 8).map {
            UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: $0, as: UInt64.self))
        })
    }
}
