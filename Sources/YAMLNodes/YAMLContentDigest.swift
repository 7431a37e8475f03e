internal import CYAML
#if canImport(Glibc)
import Glibc
#endif
import JobGraphBasics

/// A digest (XXH64) of what a YAML stream says: its events in order, each with its kind, a
/// scalar's text and style, and every tag, anchor and alias. Not comments, blank lines, indentation,
/// line breaks or whether a collection is written in block or flow style, which no event carries.
///
/// Why: a pipeline file whose content is the same as before decodes to the same pipeline, so a no-op
/// rerun after an edit of its comments or layout may replay the verdict the previous run recorded
/// (docs/state.md) instead of checking every task again.
///
/// The events are encoded one after another, each part with its length, so no two different streams
/// encode alike; the encoding is hashed a chunk of at most 64 KB at a time, each chunk's hash the seed of
/// the next, and where a chunk ends depends on the events alone, never on how they were read. The digest
/// keeps the hash after every chunk: a reader comparing a file with a digest stops at the first chunk that
/// differs, so an edit near the top of a large file is told from the file before in a few milliseconds.
public struct YAMLContentDigest: Sendable, Equatable {
    /// The hash after each chunk, in order; the last covers the whole stream.
    public var checkpoints: [UInt64]

    public init(checkpoints: [UInt64]) {
        self.checkpoints = checkpoints
    }

    /// The digest of the stream in `buffer`, read by libyaml alone; `nil` when libyaml cannot read it to its
    /// end, or as soon as it is known to differ from `expected`.
    static func of(_ buffer: UnsafeBufferPointer<UInt8>, unlessItDiffersFrom expected: YAMLContentDigest? = nil) -> YAMLContentDigest? {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { return nil }
        defer { yaml_parser_delete(&parser) }
        yaml_parser_set_input_string(&parser, buffer.baseAddress ?? UnsafePointer(bitPattern: 1), buffer.count)
        var hasher = YAMLContentHasher()
        var event = yaml_event_t()
        while yaml_parser_parse(&parser, &event) == 1 {
            hasher.add(event)
            let isEnd = event.type == YAML_STREAM_END_EVENT
            yaml_event_delete(&event)
            if isEnd { return hasher.finish() }
            if let expected, !hasher.mayStillBe(expected) { return nil }
        }
        return nil
    }
}

/// Computes a `YAMLContentDigest`, one event at a time.
struct YAMLContentHasher: ~Copyable {
    private static let capacity = 64 * 1024
    /// The encoding not hashed yet: written with `memcpy`, since `Array.append(contentsOf:)` took as long
    /// as libyaml's scanner (perf, a rerun after a comment edit of 10,000 tasks).
    private let pending = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
    private var count = 0
    private var hash: UInt64 = 0
    private var checkpoints: [UInt64] = []

    init() {}

    deinit { pending.deallocate() }

    mutating func add(_ event: borrowing yaml_event_t) {
        appendWord(UInt64(event.type.rawValue))
        switch event.type {
        case YAML_SCALAR_EVENT:
            let scalar = event.data.scalar
            appendWord(UInt64(scalar.style.rawValue))
            appendPart(scalar.value, length: scalar.value == nil ? nil : scalar.length)
            appendText(scalar.tag)
            appendText(scalar.anchor)
        case YAML_ALIAS_EVENT:
            appendText(event.data.alias.anchor)
        case YAML_SEQUENCE_START_EVENT:
            appendText(event.data.sequence_start.tag)
            appendText(event.data.sequence_start.anchor)
        case YAML_MAPPING_START_EVENT:
            appendText(event.data.mapping_start.tag)
            appendText(event.data.mapping_start.anchor)
        default:
            break
        }
    }

    /// Whether the chunks hashed so far are those `expected` begins with.
    func mayStillBe(_ expected: YAMLContentDigest) -> Bool {
        checkpoints.count <= expected.checkpoints.count && (checkpoints.isEmpty || checkpoints.last == expected.checkpoints[checkpoints.count - 1])
    }

    /// The digest of every event added.
    mutating func finish() -> YAMLContentDigest {
        flush()
        return YAMLContentDigest(checkpoints: checkpoints)
    }

    private mutating func flush() {
        guard count > 0 else { return }
        hash = XXH64.hash(UnsafeRawBufferPointer(start: pending, count: count), seed: hash)
        checkpoints.append(hash)
        count = 0
    }

    /// Eight bytes, little-endian.
    private mutating func appendWord(_ word: UInt64) {
        if count + 8 > Self.capacity { flush() }
        pending.storeBytes(of: word.littleEndian, toByteOffset: count, as: UInt64.self)
        count += 8
    }

    private mutating func appendText(_ text: UnsafeMutablePointer<yaml_char_t>?) {
        appendPart(text, length: text.map { strlen(UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) })
    }

    /// A part as its length (all ones for none) and its bytes. Where the encoding is cut into chunks depends
    /// on the events alone: a part too long for a chunk is one of its own.
    private mutating func appendPart(_ bytes: UnsafeMutablePointer<yaml_char_t>?, length: Int?) {
        appendWord(length.map { UInt64($0) } ?? .max)
        guard let bytes, let length, length > 0 else { return }
        if count + length > Self.capacity { flush() }
        if length > Self.capacity {
            hash = XXH64.hash(UnsafeRawBufferPointer(start: bytes, count: length), seed: hash)
            checkpoints.append(hash)
            return
        }
        (pending + count).copyMemory(from: bytes, byteCount: length)
        count += length
    }
}
