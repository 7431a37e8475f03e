import JobGraphBasics

/// A node of a YAML document, with the place it starts in the file.
///
/// Aliases are already resolved: an alias becomes a copy of its anchor's node, which keeps the
/// anchor's locations (copies share storage, so this costs no memory per use).
public struct YAMLNode: Sendable {
    public enum Content: Sendable {
        case scalar(YAMLScalar)
        case sequence([YAMLNode])
        case mapping([YAMLMappingEntry])
    }

    public var content: Content
    /// Where the node starts: 1-based line and column.
    public var location: SourceLocation

    public init(_ content: Content, at location: SourceLocation) {
        self.content = content
        self.location = location
    }

    public var scalar: YAMLScalar? {
        if case .scalar(let scalar) = content { return scalar }
        return nil
    }

    public var sequence: [YAMLNode]? {
        if case .sequence(let items) = content { return items }
        return nil
    }

    public var mapping: [YAMLMappingEntry]? {
        if case .mapping(let entries) = content { return entries }
        return nil
    }

    /// The scalar's text when it resolved to a string (so `1`, `true` and `null` are not strings).
    public var string: String? {
        if case .scalar(let scalar) = content, case .string(let text) = scalar.value { return text }
        return nil
    }

    /// What the node is, for messages such as "expected a list, found a mapping".
    public var kindDescription: String {
        switch content {
        case .sequence: "a list"
        case .mapping: "a mapping"
        case .scalar(let scalar): scalar.value.kindDescription
        }
    }
}

/// One `key: value` pair of a mapping, in file order.
public struct YAMLMappingEntry: Sendable {
    public var key: YAMLNode
    public var value: YAMLNode

    public init(key: YAMLNode, value: YAMLNode) {
        self.key = key
        self.value = value
    }

    /// The key's text when it is a scalar (as written, whatever it resolved to).
    public var keyText: String? { key.scalar?.text }
}

/// A scalar as written and as resolved by the YAML 1.2 core schema.
///
/// Kept small, since a large file makes millions of them and every copy retains what they hold: the
/// text is the only reference (a string's value is its text, not a second copy), and the end is two
/// 32-bit numbers rather than a `SourceLocation` with its own file name (callgrind: copying and
/// destroying scalars was a tenth of loading a large file).
public struct YAMLScalar: Sendable, Hashable {
    /// The text as written, after YAML's unquoting and folding.
    public var text: String
    private var kind: Kind
    /// `true` for unquoted scalars; only those are resolved to numbers, booleans and null.
    public var isPlain: Bool
    /// How the scalar is written, so text inside it can be located in the file.
    public var style: YAMLScalarStyle
    /// Just past the last character, 1-based; 0 when unknown.
    private var endLine: UInt32
    private var endColumn: UInt32

    /// `YAMLScalarValue` without the string's payload, which is `text`.
    private enum Kind: Sendable, Hashable {
        case null
        case bool(Bool)
        case integer(Int)
        case float(Double)
        case string
    }

    public init(text: String, value: YAMLScalarValue, isPlain: Bool, style: YAMLScalarStyle? = nil, end: SourceLocation? = nil) {
        self.text = text
        self.kind = .null
        self.isPlain = isPlain
        self.style = style ?? (isPlain ? .plain : .doubleQuoted)
        self.endLine = end.map { UInt32(clamping: $0.line) } ?? 0
        self.endColumn = end.map { UInt32(clamping: $0.column) } ?? 0
        self.value = value
    }

    /// The composer's initializer: the end as libyaml marks it (0-based), with no file name to copy.
    init(text: String, value: YAMLScalarValue, isPlain: Bool, style: YAMLScalarStyle, endMarkLine: Int, endMarkColumn: Int) {
        self.text = text
        self.kind = .null
        self.isPlain = isPlain
        self.style = style
        self.endLine = UInt32(clamping: endMarkLine + 1)
        self.endColumn = UInt32(clamping: endMarkColumn + 1)
        self.value = value
    }

    /// What the scalar means; a string's value is its `text` (setting a string value sets `text`).
    public var value: YAMLScalarValue {
        get {
            switch kind {
            case .null: .null
            case .bool(let bool): .bool(bool)
            case .integer(let integer): .integer(integer)
            case .float(let float): .float(float)
            case .string: .string(text)
            }
        }
        set {
            switch newValue {
            case .null: kind = .null
            case .bool(let bool): kind = .bool(bool)
            case .integer(let integer): kind = .integer(integer)
            case .float(let float): kind = .float(float)
            case .string(let string):
                kind = .string
                text = string
            }
        }
    }

    /// Whether the value is null, without building it.
    public var isNull: Bool {
        if case .null = kind { return true }
        return false
    }

    /// Just past the scalar's last character (closing quote included), 1-based; `nil` when unknown.
    /// The file is the scalar's node's.
    public var end: (line: Int, column: Int)? {
        endLine == 0 ? nil : (Int(endLine), Int(endColumn))
    }
}

/// How a scalar is written: plain, quoted, or as a block (`|` literal, `>` folded).
public enum YAMLScalarStyle: Sendable, Hashable {
    case plain, singleQuoted, doubleQuoted, literal, folded
}

/// What a scalar means under the YAML 1.2 core schema: only `true`/`false` are booleans, so `yes`,
/// `NO` and `off` stay strings.
public enum YAMLScalarValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int)
    case float(Double)
    case string(String)

    public var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer: "an integer"
        case .float: "a number"
        case .string: "a string"
        }
    }
}
