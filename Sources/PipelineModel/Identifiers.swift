import JobGraphBasics

/// A task's id as the file and the commands name it: `test`, or `photo[0]` for a fan-out item.
public struct TaskID: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
    public static func < (lhs: TaskID, rhs: TaskID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The id of one item of a fan-out: `base[item]`.
    public func item(_ key: String) -> TaskID { TaskID("\(rawValue)[\(key)]") }

    /// Letters, digits, `-`, `_` and `.`, not empty (contract: "task id"); `:` only between such parts,
    /// as the separator of an include's name (`web:build`, `web:sub:x`).
    public static func isValid(_ text: String) -> Bool { syntax(of: text) != .invalid }

    /// What kind of id `text` is, in one pass over its bytes.
    public enum Syntax: Sendable { case invalid, plain, namespaced }

    /// Whether `text` is an id a file may declare (`plain`), an included task's full id (`namespaced`), or neither.
    public static func syntax(of text: String) -> Syntax {
        // Bytes, not Unicode properties: ids are ASCII, and a large file checks many of them (in
        // contiguous storage where the string has it, which iterating `utf8` did not use).
        func isIDByte(_ byte: UInt8) -> Bool {
            (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
        guard !text.isEmpty else { return .invalid }
        var text = text
        return text.withUTF8 { bytes in
            var syntax = Syntax.plain
            // A `:` may not start or end the id, nor follow another.
            var previousWasColon = true
            for byte in bytes {
                if byte == UInt8(ascii: ":") {
                    if previousWasColon { return .invalid }
                    previousWasColon = true
                    syntax = .namespaced
                } else if isIDByte(byte) {
                    previousWasColon = false
                } else {
                    return .invalid
                }
            }
            return previousWasColon ? .invalid : syntax
        }
    }

    /// The id inside the include named `namespace`: `web:build`.
    public func namespaced(in namespace: String) -> TaskID { TaskID(namespace + ":" + rawValue) }
}

/// The name of a queue declared under `queues:`.
public struct QueueName: Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}

/// A value with the place in the file it was written, for diagnostics made after decoding.
public struct Located<Value: Sendable>: Sendable {
    public var value: Value
    public var location: SourceLocation
    public init(_ value: Value, at location: SourceLocation) {
        self.value = value
        self.location = location
    }
}

extension Located: Equatable where Value: Equatable {}
extension Located: Hashable where Value: Hashable {}

extension TaskID: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
