import Execution
import JobGraphBasics

/// What changed between the definition of a task's last success and its definition now, for the reason
/// a rerun gives ("command changed", "environment 'FOO' changed", "action parameter 'url' changed").
extension TaskDefinition {
    /// The definition a `canonicalEncoding` encodes; `nil` for a text that is not one.
    init?(canonicalEncoding text: String) {
        var reader = EncodingReader(bytes: Array(text.utf8))
        guard reader.line() == "jobgraph task definition 1",
              let action = reader.field("action")?.first, let parameters = reader.field("parameters"),
              let environment = reader.field("environment"), environment.count % 2 == 0,
              let workingDirectory = reader.field("working_directory")?.first,
              let inputs = reader.field("inputs"), let outputs = reader.field("outputs"), reader.isAtEnd
        else { return nil }
        var variables: [String: String] = [:]
        for pair in stride(from: 0, to: environment.count, by: 2) { variables[environment[pair]] = environment[pair + 1] }
        self.init(action: action, parameters: parameters, environment: variables, workingDirectory: workingDirectory,
                  inputs: inputs, outputs: outputs)
    }

    /// The first difference from `old` to `self`, in the order a user reads a task: the action, its
    /// commands or parameters, its environment (by name), its folder, its patterns. `nil` when equal.
    func change(from old: TaskDefinition) -> RunReason? {
        if action != old.action { return .actionChanged }
        if parameters != old.parameters {
            guard action != "run" && action != "parallel" else { return .commandChanged }
            return Self.firstDifferentKey(Self.namedValues(old.parameters), Self.namedValues(parameters)).map { .parameterChanged($0) }
                ?? .definitionChanged
        }
        if let name = Self.firstDifferentKey(old.environment, environment) { return .environmentChanged(name) }
        if workingDirectory != old.workingDirectory { return .workingDirectoryChanged }
        if inputs != old.inputs { return .inputPatternsChanged }
        if outputs != old.outputs { return .outputPatternsChanged }
        return nil
    }

    /// `name=value` parameters as a dictionary.
    private static func namedValues(_ parameters: [String]) -> [String: String] {
        var values: [String: String] = [:]
        for parameter in parameters {
            let name = parameter.prefix { $0 != "=" }
            values[String(name)] = String(parameter.dropFirst(name.count))
        }
        return values
    }

    /// The first key, in byte order, whose value differs or that only one side has.
    private static func firstDifferentKey(_ old: [String: String], _ new: [String: String]) -> String? {
        Set(old.keys).union(new.keys).sorted { $0.precedesInByteOrder($1) }.first { old[$0] != new[$0] }
    }
}

/// Reads `canonicalEncoding`'s lines: `name count`, then `count` values each prefixed by its length in UTF-8
/// bytes, so a value may hold any character, newlines included.
private struct EncodingReader {
    let bytes: [UInt8]
    var position = 0

    var isAtEnd: Bool { position == bytes.count }

    /// The text up to the next newline, which it consumes; `nil` at the end.
    mutating func line() -> String? {
        guard let end = bytes[position...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        defer { position = end + 1 }
        return String(decoding: bytes[position..<end], as: UTF8.self)
    }

    /// The values of the field `name`, which must come next.
    mutating func field(_ name: String) -> [String]? {
        guard let header = line(), header.hasPrefix(name + " "), let count = Int(header.dropFirst(name.count + 1)), count >= 0
        else { return nil }
        var values: [String] = []
        for _ in 0..<count {
            guard let colon = bytes[position...].firstIndex(of: UInt8(ascii: ":")),
                  let length = Int(String(decoding: bytes[position..<colon], as: UTF8.self)), length >= 0,
                  colon + 1 + length < bytes.count, bytes[colon + 1 + length] == UInt8(ascii: "\n")
            else { return nil }
            values.append(String(decoding: bytes[(colon + 1)..<(colon + 1 + length)], as: UTF8.self))
            position = colon + 2 + length
        }
        return values
    }
}
