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

    /// Letters, digits, `-`, `_` and `.`, not empty (contract: "task id").
    public static func isValid(_ text: String) -> Bool {
        // Bytes, not Unicode properties: ids are ASCII, and a large file checks many of them (in
        // contiguous storage where the string has it, which iterating `utf8` did not use).
        func isIDByte(_ byte: UInt8) -> Bool {
            (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
        guard !text.isEmpty else { return false }
        var text = text
        return text.withUTF8 { bytes in bytes.allSatisfy(isIDByte) }
    }
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
