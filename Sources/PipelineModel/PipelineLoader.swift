#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import JobGraphBasics
import YAMLNodes

/// Reads, decodes and checks a pipeline file (contract: "The pipeline file").
///
/// Every problem found goes to `diagnostics`: YAML syntax first (which stops there), then every
/// mistake in what the document says, in one pass. Safe to call from any thread.
public enum PipelineLoader {
    /// Reads and decodes a pipeline file; `nil` when any error was found (all of them are in `diagnostics`).
    ///
    /// - Parameters:
    ///   - path: the file, as the user typed it; messages name it so.
    ///   - variableOverrides: `--var NAME=VALUE` values; each replaces or adds a variable.
    public static func load(
        contentsOf path: String, variableOverrides: [String: String] = [:], diagnostics: inout Diagnostics
    ) -> Pipeline? {
        switch readFile(path) {
        case .success(let bytes):
            return load(bytes, file: path, variableOverrides: variableOverrides, diagnostics: &diagnostics)
        case .failure(let reason):
            diagnostics.error("cannot read '\(path)': \(reason.message)", at: nil)
            return nil
        }
    }

    /// Decodes a pipeline from the bytes of a file named `file`; `nil` when any error was found.
    /// - Parameter digestingContent: whether to set `Pipeline.contentDigest`, which a run keeps for its
    ///   replay record (4% of the load's time at 1,000,000 tasks).
    public static func load(
        _ bytes: [UInt8], file: String, variableOverrides: [String: String] = [:], digestingContent: Bool = false,
        diagnostics: inout Diagnostics
    ) -> Pipeline? {
        let source = SourceText(bytes)
        let stream = TaskStream(decoder: NodeDecoder(source: source), overrides: variableOverrides, fileSize: bytes.count)
        let yamlStream = stream.yamlStream()
        guard let document = YAMLLoader.loadDocument(bytes, file: file, streaming: yamlStream, digestingContent: digestingContent,
                                                     diagnostics: &diagnostics)
        else { return nil }
        let root = document.root
        guard !yamlStream.didStream || stream.isSound(root: root) else {
            // Rare (`vars` after `tasks`, say): read it again as a whole rather than decode differently.
            return loadWhole(bytes, source: source, file: file, variableOverrides: variableOverrides,
                             digestingContent: digestingContent, diagnostics: &diagnostics)
        }
        var decoder = stream.decoder
        var pipeline = Pipeline.decode(
            root, file: file, variableOverrides: variableOverrides, streamed: yamlStream.didStream ? stream : nil,
            decoder: &decoder)
        pipeline.contentDigest = document.contentDigest
        diagnostics.append(contentsOf: decoder.diagnostics)
        return decoder.diagnostics.hasErrors ? nil : pipeline
    }

    /// Decodes a pipeline from its whole YAML tree, with no streaming.
    static func loadWhole(
        _ bytes: [UInt8], source: SourceText, file: String, variableOverrides: [String: String], digestingContent: Bool,
        diagnostics: inout Diagnostics
    ) -> Pipeline? {
        guard let document = YAMLLoader.loadDocument(bytes, file: file, digestingContent: digestingContent, diagnostics: &diagnostics)
        else { return nil }
        var decoder = NodeDecoder(source: source)
        var pipeline = Pipeline.decode(document.root, file: file, variableOverrides: variableOverrides, decoder: &decoder)
        pipeline.contentDigest = document.contentDigest
        diagnostics.append(contentsOf: decoder.diagnostics)
        return decoder.diagnostics.hasErrors ? nil : pipeline
    }

    /// Decodes a pipeline held in a string, for tests and tools; `nil` when any error was found.
    public static func load(
        yaml: String, file: String = "pipeline.yaml", variableOverrides: [String: String] = [:], diagnostics: inout Diagnostics
    ) -> Pipeline? {
        load(Array(yaml.utf8), file: file, variableOverrides: variableOverrides, diagnostics: &diagnostics)
    }

    private struct ReadFailure: Error {
        var message: String
    }

    /// The file's bytes as `load(contentsOf:)` reads them; `nil` when it cannot be read. A no-op rerun
    /// compares them with the bytes its replayed run read.
    public static func bytes(ofFile path: String) -> [UInt8]? {
        try? readFile(path).get()  // the reason is not needed: unreadable means no replay
    }

    /// Whether a load of `bytes` would give `expected` as its `Pipeline.contentDigest`: told by libyaml
    /// alone in about a third of the load's time, less when they differ early.
    public static func content(of bytes: [UInt8], is expected: YAMLContentDigest) -> Bool {
        YAMLLoader.content(of: bytes, is: expected)
    }

    /// Whether the file holds exactly `expected`, compared a chunk at a time: a run checks after it ended
    /// that its pipeline file did not change, and a copy of a 12 MB file came on top of the run's peak.
    public static func file(_ path: String, holds expected: [UInt8]) -> Bool {
        var offset = 0
        let readToEnd = readChunks(of: path) { chunk in
            guard expected.count - offset >= chunk.count else { return false }
            let same = expected.withUnsafeBytes { whole in
                chunk.isEmpty || memcmp(chunk.baseAddress!, whole.baseAddress! + offset, chunk.count) == 0
            }
            offset += chunk.count
            return same
        }
        return (try? readToEnd.get()) == true && offset == expected.count
    }

    /// The whole file, read with POSIX calls so the reason for a failure is the system's own words.
    private static func readFile(_ path: String) -> Result<[UInt8], ReadFailure> {
        var bytes: [UInt8] = []
        // Sized from the start: appending chunks to a 60 MB file would copy it a dozen times and
        // leave up to twice its size allocated.
        return readChunks(of: path, size: { bytes.reserveCapacity($0) }) { chunk in
            bytes.append(contentsOf: chunk)
            return true
        }.map { _ in bytes }
    }

    /// Reads the file 64 KB at a time, handing each chunk to `take` until it returns `false`.
    /// - Parameter size: told the file's size first, when it is known.
    /// - Returns: whether every chunk was taken, to the file's end.
    private static func readChunks(of path: String, size: (Int) -> Void = { _ in },
                                   _ take: (UnsafeRawBufferPointer) -> Bool) -> Result<Bool, ReadFailure> {
        func failure() -> ReadFailure { ReadFailure(message: String(cString: strerror(errno))) }
        var descriptor: Int32
        repeat { descriptor = open(path, O_RDONLY | O_CLOEXEC) } while descriptor == -1 && errno == EINTR
        guard descriptor >= 0 else { return .failure(failure()) }
        defer { _ = close(descriptor) }
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_size > 0 { size(Int(status.st_size)) }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return .success(true) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(failure())
            }
            guard chunk.withUnsafeBytes({ take(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }) else { return .success(false) }
        }
    }
}
