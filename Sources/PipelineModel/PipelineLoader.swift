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
        let loaded = loadAsFarAsPossible(
            contentsOf: path, variableOverrides: variableOverrides, variableCommands: variableCommands, diagnostics: &diagnostics)
        return loaded.isValid ? loaded.pipeline : nil
    }

    /// Like `load(contentsOf:)`, but also gives the pipeline as far as it decoded when it has errors
    /// (`isValid` false), so the task graph can look for cycles among the tasks that did (bug 10 of
    /// issue 35: every mistake at once). `pipeline` is `nil` when the file cannot be read or parsed.
    package static func loadAsFarAsPossible(
        contentsOf path: String, variableOverrides: [String: String] = [:], variableCommands: VariableCommandRunner? = nil,
        diagnostics: inout Diagnostics
    ) -> (pipeline: Pipeline?, isValid: Bool) {
        switch readFile(path) {
        case .success(let bytes):
            return loadAsFarAsPossible(
                bytes, file: path, variableOverrides: variableOverrides, variableCommands: variableCommands, diagnostics: &diagnostics)
        case .failure(let reason):
            diagnostics.error("cannot read '\(path)': \(reason.message)", at: nil)
            return (nil, false)
        }
    }

    /// `loadAsFarAsPossible(contentsOf:)` for the bytes of a file named `file`.
    package static func loadAsFarAsPossible(
        _ bytes: [UInt8], file: String, variableOverrides: [String: String] = [:], variableCommands: VariableCommandRunner? = nil,
        diagnostics: inout Diagnostics
    ) -> (pipeline: Pipeline?, isValid: Bool) {
        var problems = Diagnostics()
        let link = IncludeLink(realPath: realPath(file) ?? file, shown: file)
        let pipeline = load(
            bytes, file: file, variableOverrides: variableOverrides, variableCommands: variableCommands, inclusion: nil, chain: [link],
            diagnostics: &problems)
        diagnostics.append(contentsOf: problems)
        return (pipeline, !problems.hasErrors)
    }

    /// Decodes a pipeline from the bytes of a file named `file`; `nil` when any error was found.
    ///
    /// The files it includes are read relative to `file`'s folder (docs/pipeline.md, "Includes").
    public static func load(
        _ bytes: [UInt8], file: String, variableOverrides: [String: String] = [:], variableCommands: VariableCommandRunner? = nil,
        diagnostics: inout Diagnostics
    ) -> Pipeline? {
        let loaded = loadAsFarAsPossible(
            bytes, file: file, variableOverrides: variableOverrides, variableCommands: variableCommands, diagnostics: &diagnostics)
        return loaded.isValid ? loaded.pipeline : nil
    }

    /// Decodes a file, the one that is run or one that `inclusion` reads, then the files it includes; the
    /// pipeline as far as it decoded, errors or not (the caller looks at `diagnostics`).
    static func load(
        _ bytes: [UInt8], file: String, variableOverrides: [String: String], variableCommands: VariableCommandRunner?,
        inclusion: Inclusion?, chain: [IncludeLink], diagnostics: inout Diagnostics
    ) -> Pipeline? {
        var problems = Diagnostics()
        guard var pipeline = decoded(
            bytes, file: file, variableOverrides: variableOverrides, variableCommands: variableCommands, inclusion: inclusion,
            diagnostics: &problems)
        else {
            diagnostics.append(contentsOf: problems)
            return nil
        }
        // Included files are read even when this one has a mistake, so every mistake shows at once.
        resolveIncludes(&pipeline, chain: chain, variableCommands: variableCommands, diagnostics: &problems)
        diagnostics.append(contentsOf: problems)
        return pipeline
    }

    /// The pipeline as far as it decodes, errors or not; `nil` only when the YAML itself is broken.
    static func decoded(
        _ bytes: [UInt8], file: String, variableOverrides: [String: String], variableCommands: VariableCommandRunner?,
        inclusion: Inclusion?, diagnostics: inout Diagnostics
    ) -> Pipeline? {
        let source = SourceText(bytes)
        let stream = TaskStream(
            decoder: NodeDecoder(source: source, inclusion: inclusion), overrides: variableOverrides, commands: variableCommands,
            fileSize: bytes.count)
        let yamlStream = stream.yamlStream()
        guard let root = YAMLLoader.load(bytes, file: file, streaming: yamlStream, diagnostics: &diagnostics) else { return nil }
        guard !yamlStream.didStream || stream.isSound(root: root) else {
            // Rare (`vars` after `tasks`, say): read it again as a whole rather than decode differently.
            // The `sh` commands the stream ran are run again: a file in this order pays for its order.
            guard let root = YAMLLoader.load(bytes, file: file, diagnostics: &diagnostics) else { return nil }
            var decoder = NodeDecoder(source: source, inclusion: inclusion)
            let pipeline = Pipeline.decode(
                root, file: file, variableOverrides: variableOverrides, variableCommands: variableCommands, decoder: &decoder)
            diagnostics.append(contentsOf: decoder.diagnostics)
            return pipeline
        }
        var decoder = stream.decoder
        let pipeline = Pipeline.decode(
            root, file: file, variableOverrides: variableOverrides, variableCommands: variableCommands,
            streamed: yamlStream.didStream ? stream : nil, decoder: &decoder)
        diagnostics.append(contentsOf: decoder.diagnostics)
        return pipeline
    }

    /// Decodes a pipeline held in a string, for tests and tools; `nil` when any error was found.
    public static func load(
        yaml: String, file: String = "pipeline.yaml", variableOverrides: [String: String] = [:], diagnostics: inout Diagnostics
    ) -> Pipeline? {
        load(Array(yaml.utf8), file: file, variableOverrides: variableOverrides, diagnostics: &diagnostics)
    }

    struct ReadFailure: Error {
        var message: String
    }

    /// The whole file, read with POSIX calls so the reason for a failure is the system's own words.
    static func readFile(_ path: String) -> Result<[UInt8], ReadFailure> {
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
