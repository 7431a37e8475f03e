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
    ///   - variableCommands: runs the command of each `sh` variable; `nil` (checking a file) runs none.
    public static func load(
        contentsOf path: String, variableOverrides: [String: String] = [:], variableCommands: VariableCommandRunner? = nil,
        diagnostics: inout Diagnostics
    ) -> Pipeline? {
        switch readFile(path) {
        case .success(let bytes):
            return load(bytes, file: path, variableOverrides: variableOverrides, variableCommands: variableCommands, diagnostics: &diagnostics)
        case .failure(let reason):
            diagnostics.error("cannot read '\(path)': \(reason.message)", at: nil)
            return nil
        }
    }

    /// Decodes a pipeline from the bytes of a file named `file`; `nil` when any error was found.
    public static func load(
        _ bytes: [UInt8], file: String, variableOverrides: [String: String] = [:], variableCommands: VariableCommandRunner? = nil,
        diagnostics: inout Diagnostics
    ) -> Pipeline? {
        let source = SourceText(bytes)
        let stream = TaskStream(
            decoder: NodeDecoder(source: source), overrides: variableOverrides, commands: variableCommands, fileSize: bytes.count)
        let yamlStream = stream.yamlStream()
        guard let root = YAMLLoader.load(bytes, file: file, streaming: yamlStream, diagnostics: &diagnostics) else { return nil }
        guard !yamlStream.didStream || stream.isSound(root: root) else {
            // Rare (`vars` after `tasks`, say): read it again as a whole rather than decode differently.
            // The `sh` commands the stream ran are run again: a file in this order pays for its order.
            return loadWhole(
                bytes, source: source, file: file, variableOverrides: variableOverrides, variableCommands: variableCommands,
                diagnostics: &diagnostics)
        }
        var decoder = stream.decoder
        let pipeline = Pipeline.decode(
            root, file: file, variableOverrides: variableOverrides, variableCommands: variableCommands,
            streamed: yamlStream.didStream ? stream : nil, decoder: &decoder)
        diagnostics.append(contentsOf: decoder.diagnostics)
        return decoder.diagnostics.hasErrors ? nil : pipeline
    }

    /// Decodes a pipeline from its whole YAML tree, with no streaming.
    static func loadWhole(
        _ bytes: [UInt8], source: SourceText, file: String, variableOverrides: [String: String],
        variableCommands: VariableCommandRunner? = nil, diagnostics: inout Diagnostics
    ) -> Pipeline? {
        guard let root = YAMLLoader.load(bytes, file: file, diagnostics: &diagnostics) else { return nil }
        var decoder = NodeDecoder(source: source)
        let pipeline = Pipeline.decode(
            root, file: file, variableOverrides: variableOverrides, variableCommands: variableCommands, decoder: &decoder)
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

    /// The whole file, read with POSIX calls so the reason for a failure is the system's own words.
    private static func readFile(_ path: String) -> Result<[UInt8], ReadFailure> {
        func failure() -> ReadFailure { ReadFailure(message: String(cString: strerror(errno))) }
        var descriptor: Int32
        repeat { descriptor = open(path, O_RDONLY | O_CLOEXEC) } while descriptor == -1 && errno == EINTR
        guard descriptor >= 0 else { return .failure(failure()) }
        defer { _ = close(descriptor) }
        var bytes: [UInt8] = []
        // Sized from the start: appending chunks to a 60 MB file would copy it a dozen times and
        // leave up to twice its size allocated.
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_size > 0 { bytes.reserveCapacity(Int(status.st_size)) }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return .success(bytes) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(failure())
            }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }
}
