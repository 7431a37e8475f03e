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
        !text.isEmpty && text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                || scalar == "-" || scalar == "_" || scalar == ".")
        }
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
