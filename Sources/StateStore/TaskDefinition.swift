import Execution
import JobGraphBasics
import PipelineModel

/// Everything that defines what a task produces, resolved for one run: when any of it changes, the task
/// is out of date (issue: "command, env, vars, action parameters").
///
/// Paths inside the pipeline's folder are kept relative to it, so moving or re-cloning the project does
/// not make every task out of date. Retries, timeouts, priorities and queues are left out: they change
/// how a task runs, not what it makes.
public struct TaskDefinition: Sendable, Hashable {
    /// The action's keyword: `run`, `parallel`, `download` or `filter`.
    public var action: String
    /// The resolved commands in order, or the action's parameters as `name=value`.
    public var parameters: [String]
    /// The environment values the pipeline sets for the task: its `env`, the task's `env`, the vars the
    /// task uses or the file exports, and its params; not the caller's own environment.
    public var environment: [String: String]
    /// The task's folder, relative to the pipeline's folder (`.` for the same), or absolute when outside it.
    public var workingDirectory: String
    /// The `inputs` patterns, rendered, relative to the task's folder; `*`, `?` and `**` allowed.
    /// Part of the definition because declaring other files is a change too.
    public var inputs: [String]
    /// The `outputs` patterns, rendered, relative to the task's folder.
    public var outputs: [String]

    /// Declares neither inputs nor outputs: never up to date, so it runs every time.
    public var isUntracked: Bool { Self.isUntracked(inputs: inputs, outputs: outputs) }

    /// Whether a task with these `inputs` and `outputs` is untracked (see `isUntracked`).
    public static func isUntracked(inputs: [String], outputs: [String]) -> Bool { inputs.isEmpty && outputs.isEmpty }

    public init(action: String, parameters: [String], environment: [String: String] = [:], workingDirectory: String = ".",
                inputs: [String] = [], outputs: [String] = []) {
        self.action = action
        self.parameters = parameters
        self.environment = environment
        self.workingDirectory = workingDirectory
        self.inputs = inputs
        self.outputs = outputs
    }

    /// The definition of the work a runner resolved for a task.
    /// - Parameters:
    ///   - work: any attempt's work; the attempt number is ignored.
    ///   - environmentNames: the names the pipeline sets: its `env` keys, the task's `env` keys, the
    ///     names of the vars the task uses or the file exports, and its params; their values are taken
    ///     from `work.environment`.
    ///   - inputs: the task's `inputs` patterns, rendered.
    ///   - outputs: the task's `outputs` patterns, rendered.
    ///   - pipelineDirectory: absolute; paths below it are recorded relative to it.
    public init(work: TaskWork, environmentNames: some Sequence<String>, inputs: [String], outputs: [String],
                pipelineDirectory: String) {
        func relative(_ path: String) -> String {
            if path == pipelineDirectory { return "." }
            let prefix = pipelineDirectory.hasSuffix("/") ? pipelineDirectory : pipelineDirectory + "/"
            return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
        }
        func optional(_ name: String, _ value: (some CustomStringConvertible)?) -> [String] {
            value.map { ["\(name)=\($0)"] } ?? []
        }
        switch work.work {
        case .shell(let commands, let concurrently):
            action = concurrently ? "parallel" : "run"
            parameters = commands
        case .download(let url, let destination, let sha256, let maxBytes):
            action = "download"
            parameters = ["url=\(url)", "to=\(relative(destination))"] + optional("sha256", sha256) + optional("max_bytes", maxBytes)
        case .filter(let filter):
            action = "filter"
            parameters = ["input=\(relative(filter.input))", "output=\(relative(filter.output))", "effect=\(filter.effect.rawValue)"]
                + optional("intensity", filter.intensity) + optional("radius", filter.radius) + optional("width", filter.width)
                + optional("height", filter.height) + optional("quality", filter.quality)
        }
        var environment: [String: String] = [:]
        for name in environmentNames { environment[name] = work.environment[name] }
        self.environment = environment
        workingDirectory = relative(work.workingDirectory)
        self.inputs = inputs
        self.outputs = outputs
    }

    /// The SHA-256 (lower-case hex) of the canonical encoding: equal definitions, equal fingerprints.
    public var fingerprint: String { Self.fingerprint(of: canonicalBytes) }

    /// The fingerprint and the canonical encoding from one encoding, for a check that stores both; the
    /// fingerprint is taken from `stored` when its encoding is this definition's, byte for byte: hashing every task's definition was a tenth of a no-op rerun's instructions (callgrind,
    /// 10,000 tasks), and comparing the bytes costs almost nothing.
    func fingerprintAndEncoding(knownFrom stored: StateStore.StoredFingerprints?) -> (fingerprint: String, encoding: String) {
        let bytes = canonicalBytes
        let isStored = stored?.definitionDigest != nil && bytes.withUnsafeBytes(Self.digest) == stored?.definitionDigest
        let fingerprint = isStored ? stored!.fingerprints.definition : Self.fingerprint(of: bytes)
        return (fingerprint, String(decoding: bytes, as: UTF8.self))
    }

    /// A digest of an encoding for comparing two in one process: Swift's `Hasher`, SipHash keyed afresh by
    /// every process, so no text can be made to collide with another on purpose, and by chance only with
    /// odds of 1 in 2^64. Never stored: another process gives other digests.
    static func digest(of bytes: UnsafeRawBufferPointer) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: bytes)
        return hasher.finalize()
    }

    private static func fingerprint(of bytes: [UInt8]) -> String {
        var hasher = SHA256()
        bytes.withUnsafeBytes { hasher.update($0) }
        return hasher.finalizeHex()
    }

    /// A text that only this definition encodes to: every field named and every value prefixed by its
    /// length in UTF-8 bytes, so no choice of values can make two definitions collide by concatenation;
    /// the environment sorted by name, so the order of a dictionary cannot change it.
    var canonicalEncoding: String { String(decoding: canonicalBytes, as: UTF8.self) }

    /// The canonical encoding's bytes, written straight into one buffer: built with `String` appends and
    /// interpolation it cost 38,000 instructions a task, a tenth of a 10,000-task no-op rerun (callgrind).
    private var canonicalBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        func append(_ text: String) { bytes.appendUTF8(of: text) }
        func append(_ number: Int) {  // a count or a length: its decimal digits, without a String for them
            var divisor = 1
            while divisor <= number / 10 { divisor *= 10 }
            var rest = number
            repeat {
                bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
                rest %= divisor
                divisor /= 10
            } while divisor > 0
        }
        func field(_ name: StaticString, _ values: [String]) {
            name.withUTF8Buffer { bytes.append(contentsOf: $0) }
            bytes.append(UInt8(ascii: " "))
            append(values.count)
            bytes.append(UInt8(ascii: "\n"))
            for value in values {
                append(value.utf8.count)
                bytes.append(UInt8(ascii: ":"))
                append(value)
                bytes.append(UInt8(ascii: "\n"))
            }
        }
        append("jobgraph task definition 1\n")
        field("action", [action])
        field("parameters", parameters)
        let names = environment.keys.sorted { $0.precedesInByteOrder($1) }
        field("environment", names.flatMap { [$0, environment[$0] ?? ""] })
        field("working_directory", [workingDirectory])
        field("inputs", inputs)
        field("outputs", outputs)
        return bytes
    }
}
