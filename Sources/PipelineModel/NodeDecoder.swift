import JobGraphBasics
import YAMLNodes

/// Typed access to YAML nodes for the pipeline decoders, reporting each problem at the node at fault.
///
/// Every accessor returns `nil` after reporting, so a decoder keeps going and the user sees every
/// mistake in one pass. Null counts as "not set" for optional keys: `timeout: ~` in a task
/// overrides a default timeout with none.
struct NodeDecoder {
    var diagnostics = Diagnostics()
    let source: SourceText
    /// Names of `vars` (after `--var` overrides), in file order, for templates and suggestions.
    private(set) var variableNames: [String] = []
    private(set) var variableSet: Set<String> = []
    /// Whether `{{ attempt }}` may be used where templates are decoded now: in a task's commands, `env`
    /// and hooks, never in a path (a task's files must not depend on its attempt).
    var allowsAttempt = false
    /// The include that reads this file, or `nil` for the file that is run.
    let inclusion: Inclusion?

    init(source: SourceText, inclusion: Inclusion? = nil) {
        self.source = source
        self.inclusion = inclusion
    }

    mutating func declareVariables(_ names: [String]) {
        variableNames = names
        variableSet = Set(names)
    }

    mutating func error(_ message: String, at node: YAMLNode) {
        diagnostics.error(message, at: node.location)
    }

    // MARK: Mappings

    /// The entries of a mapping, or `nil` after reporting what was found instead.
    mutating func mapping(_ node: YAMLNode, expected: String = "a mapping", for key: String) -> [YAMLMappingEntry]? {
        if let entries = node.mapping { return entries }
        error("expected \(expected) for '\(key)', found \(Self.found(node))", at: node)
        return nil
    }

    /// Reports each key not in `allowed` (and each key that is not a scalar); returns the entries whose
    /// keys are allowed, with their text.
    /// - Parameters:
    ///   - owner: how messages name the mapping (`task 'x'`), or `nil` to name none.
    ///   - keyNoun: what messages call a key (`top-level key`).
    ///   Built only when there is something to report, since most mappings have no mistake.
    mutating func knownEntries(
        _ entries: [YAMLMappingEntry], allowed: KeySet, in owner: @autoclosure () -> String?, keyNoun: String = "key"
    ) -> [KnownEntry] {
        knownEntries(entries, allowed: allowed, in: owner(), keyNoun: keyNoun) { $0 }
    }

    /// Like `knownEntries`, making each known entry into a `Known` at once (a task's fields, say).
    mutating func knownEntries<Known>(
        _ entries: [YAMLMappingEntry], allowed: KeySet, in owner: @autoclosure () -> String?, keyNoun: String = "key",
        as make: (consuming KnownEntry) -> Known
    ) -> [Known] {
        var known: [Known] = []
        known.reserveCapacity(entries.count)
        for entry in entries {
            guard case .scalar(let scalar) = entry.key.content else {
                let place = owner().map { " in \($0)" } ?? ""
                error("expected a key name\(place), found \(Self.found(entry.key))", at: entry.key)
                continue
            }
            let key = scalar.text
            guard let index = allowed.index(of: key) else {
                let place = owner().map { " in \($0)" } ?? ""
                let hint = Suggestion.closest(to: key, in: allowed.ordered).map { "; did you mean '\($0)'?" }
                    ?? "; expected \(Suggestion.list(allowed.ordered))"
                error("unknown \(keyNoun) '\(key)'\(place)\(hint)", at: entry.key)
                continue
            }
            known.append(make(KnownEntry(key: key, index: index, entry: entry)))
        }
        return known
    }

    // MARK: Scalars

    /// A scalar's text as written (`1`, `yes` and `true` alike); `nil` for null or a collection.
    mutating func text(_ node: YAMLNode, expected: String = "a string", for key: String) -> String? {
        if let scalar = node.scalar, !scalar.isNull { return scalar.text }
        error("expected \(expected) for '\(key)', found \(Self.found(node))", at: node)
        return nil
    }

    /// Like `text`, but an empty string is refused too.
    mutating func nonEmptyText(_ node: YAMLNode, expected: String = "a string", for key: String) -> String? {
        guard let text = text(node, expected: expected, for: key) else { return nil }
        if text.isEmpty {
            error("'\(key)' is empty; expected \(expected)", at: node)
            return nil
        }
        return text
    }

    mutating func integer(_ node: YAMLNode, for key: String, in range: ClosedRange<Int>) -> Int? {
        guard case .integer(let value)? = node.scalar?.value else {
            let found = Self.found(node)
            if case .float? = node.scalar?.value {
                error("expected a whole number for '\(key)', found \(found)", at: node)
            } else {
                error("expected an integer for '\(key)', found \(found)", at: node)
            }
            return nil
        }
        guard range.contains(value) else {
            error("'\(key)' must be \(Self.describe(range)), found \(value)", at: node)
            return nil
        }
        return value
    }

    /// A number; `above` excludes its bound (`radius` must be more than 0), `range` includes both.
    mutating func number(_ node: YAMLNode, for key: String, in range: ClosedRange<Double>? = nil, above: Double? = nil) -> Double? {
        let value: Double
        switch node.scalar?.value {
        case .integer(let integer)?: value = Double(integer)
        case .float(let float)? where float.isFinite: value = float
        default:
            error("expected a number for '\(key)', found \(Self.found(node))", at: node)
            return nil
        }
        if let range, !range.contains(value) {
            error("'\(key)' must be from \(Self.format(range.lowerBound)) to \(Self.format(range.upperBound)), found \(node.scalar?.text ?? "")", at: node)
            return nil
        }
        if let above, value <= above {
            error("'\(key)' must be more than \(Self.format(above)), found \(node.scalar?.text ?? "")", at: node)
            return nil
        }
        return value
    }

    mutating func bool(_ node: YAMLNode, for key: String) -> Bool? {
        if case .bool(let value)? = node.scalar?.value { return value }
        error("expected true or false for '\(key)', found \(Self.found(node))", at: node)
        return nil
    }

    /// Seconds, from `90`, `1.5`, `90s`, `10m`, `1h30m`; `positive` refuses zero.
    mutating func duration(_ node: YAMLNode, for key: String, positive: Bool = false) -> Double? {
        guard let scalar = node.scalar, !scalar.isNull else {
            error("expected a duration for '\(key)', found \(Self.found(node))", at: node)
            return nil
        }
        guard let seconds = DurationText.seconds(from: scalar.text) else {
            error("invalid duration '\(scalar.text)' for '\(key)'; use a number of seconds or a value like '90s', '10m', '1h'", at: node)
            return nil
        }
        if positive, seconds <= 0 {
            error("'\(key)' must be longer than 0 seconds, found '\(scalar.text)'", at: node)
            return nil
        }
        return withinLongestDuration(seconds, node, for: key)
    }

    /// `seconds`, or `nil` with an error at `node` when it is longer than any duration a pipeline may give.
    mutating func withinLongestDuration(_ seconds: Double, _ node: YAMLNode, for key: String) -> Double? {
        guard seconds <= DurationText.longestSeconds else {
            error("'\(key)' must be at most \(DurationText.text(forSeconds: DurationText.longestSeconds)) (365 days), found '\(Self.shortened(node.scalar?.text ?? ""))'", at: node)
            return nil
        }
        return seconds
    }

    /// One of a contract vocabulary, named `noun` in messages (`unknown priority 'urgent'`).
    mutating func choice<Choice: RawRepresentable & CaseIterable>(
        _ node: YAMLNode, for key: String, noun: String
    ) -> Choice? where Choice.RawValue == String {
        let names = Choice.allCases.map(\.rawValue)
        guard let scalar = node.scalar, !scalar.isNull else {
            error("expected one of \(Suggestion.list(names)) for '\(key)', found \(Self.found(node))", at: node)
            return nil
        }
        if let value = Choice(rawValue: scalar.text) { return value }
        let hint = Suggestion.closest(to: scalar.text, in: names).map { "; did you mean '\($0)'?" }
            ?? "; expected \(Suggestion.list(names))"
        error("unknown \(noun) '\(Self.shortened(scalar.text))'\(hint)", at: node)
        return nil
    }

    /// Whether the node is a scalar other than null: what `scalarList` accepts as an item.
    static func isText(_ node: YAMLNode) -> Bool {
        if case .scalar(let scalar) = node.content { return !scalar.isNull }
        return false
    }

    /// The scalars of a list, or of a single scalar standing for a list of one.
    mutating func scalarList(_ node: YAMLNode, expected: String, for key: String) -> [YAMLNode]? {
        let items: [YAMLNode]
        if let scalar = node.scalar, scalar.isNull {
            error("expected \(expected) for '\(key)', found \(Self.found(node))", at: node)
            return nil
        } else if node.scalar != nil {
            items = [node]
        } else if let sequence = node.sequence {
            items = sequence
        } else {
            error("expected \(expected) for '\(key)', found \(Self.found(node))", at: node)
            return nil
        }
        var scalars: [YAMLNode] = []
        scalars.reserveCapacity(items.count)
        var isValid = true
        for item in items {
            if Self.isText(item) {
                scalars.append(item)
            } else {
                error("expected \(expected) for '\(key)', found \(Self.found(item)) in the list", at: item)
                isValid = false
            }
        }
        return isValid ? scalars : nil
    }

    // MARK: Templates

    /// A scalar's text split into a template, its placeholders checked against `vars` and `item`.
    mutating func template(_ node: YAMLNode, expected: String = "a string", for key: String, item: ItemScope) -> Template? {
        guard let text = text(node, expected: expected, for: key) else { return nil }
        return TemplateParser.parse(text, in: node, item: item, decoder: &self)
    }

    /// A non-empty template, for commands and paths where nothing written means a mistake.
    mutating func nonEmptyTemplate(_ node: YAMLNode, expected: String, for key: String, item: ItemScope) -> Template? {
        guard let text = nonEmptyText(node, expected: expected, for: key) else { return nil }
        return TemplateParser.parse(text, in: node, item: item, decoder: &self)
    }

    /// Templates of a list (or of a single string); `nil` after any problem.
    mutating func templateList(_ node: YAMLNode, expected: String, for key: String, item: ItemScope, allowsEmpty: Bool = true) -> [Template]? {
        // The common single command skips building a list of one node.
        if case .scalar(let scalar) = node.content, !scalar.isNull, !scalar.text.isEmpty {
            return TemplateParser.parse(scalar.text, in: node, item: item, decoder: &self).map { [$0] }
        }
        guard let items = scalarList(node, expected: expected, for: key) else { return nil }
        if items.isEmpty, !allowsEmpty {
            error("'\(key)' is empty; expected \(expected)", at: node)
            return nil
        }
        var templates: [Template] = []
        templates.reserveCapacity(items.count)
        var isValid = true
        for element in items {
            guard let text = element.scalar?.text else { continue }
            if text.isEmpty, !allowsEmpty {
                error("empty entry in '\(key)'; expected \(expected)", at: element)
                isValid = false
                continue
            }
            if let template = TemplateParser.parse(text, in: element, item: item, decoder: &self) {
                templates.append(template)
            } else {
                isValid = false
            }
        }
        return isValid ? templates : nil
    }

    // MARK: Wording

    /// How a node is named after "found": `'two'`, `a number '1.5'`, `a list`, `null`.
    static func found(_ node: YAMLNode) -> String {
        switch node.content {
        case .sequence: return "a list"
        case .mapping: return "a mapping"
        case .scalar(let scalar):
            switch scalar.value {
            case .null: return scalar.isPlain && scalar.text.isEmpty ? "nothing" : "null"
            case .string: return "'\(shortened(scalar.text))'"
            default: return "\(scalar.value.kindDescription) '\(shortened(scalar.text))'"
            }
        }
    }

    /// The user's text, cut to a readable length for quoting in a message.
    static func shortened(_ text: String) -> String {
        let firstLine = text.prefix { $0 != "\n" && $0 != "\r" }
        if firstLine.count <= 60, firstLine.count == text.count { return text }
        return firstLine.prefix(57) + "…"
    }

    private static func describe(_ range: ClosedRange<Int>) -> String {
        if range.upperBound == .max { return range.lowerBound == 0 ? "0 or more" : "at least \(range.lowerBound)" }
        return "from \(range.lowerBound) to \(range.upperBound)"
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

/// What `{{ item }}` means where a template is written.
enum ItemScope: Sendable {
    /// Outside a `foreach` task: `item` is undefined.
    case none
    /// A task with a listed `foreach`: `item` is a string, with no fields.
    case listed
    /// A task with `foreach: {from: …}`: `item` may be an object, so `item.url` is allowed.
    case file
    /// `foreach.from` itself, read before any item exists.
    case foreachSource
}

/// The keys a mapping allows, in the order messages list them.
///
/// Looked up by length first and then compared: keys are a few short words, and hashing each key of
/// every task cost more than the couple of comparisons this leaves (callgrind).
struct KeySet: Sendable {
    let ordered: [String]
    /// Positions in `ordered`, grouped by the key's length in UTF-8 bytes: `byLength[n]` holds the
    /// positions of keys `n` bytes long.
    private let byLength: [[Int]]

    init(_ ordered: [String]) {
        self.ordered = ordered
        var byLength = [[Int]](repeating: [], count: (ordered.map(\.utf8.count).max() ?? 0) + 1)
        for (index, key) in ordered.enumerated() where !byLength[key.utf8.count].contains(where: { ordered[$0] == key }) {
            byLength[key.utf8.count].append(index)
        }
        self.byLength = byLength
    }

    func contains(_ key: String) -> Bool { index(of: key) != nil }

    /// The key's position in `ordered` (the first, should it be listed twice).
    func index(of key: String) -> Int? {
        let length = key.utf8.count
        guard length < byLength.count else { return nil }
        return byLength[length].first { ordered[$0] == key }
    }
}

/// An entry of a mapping whose key is one of its `KeySet`.
struct KnownEntry {
    var key: String
    /// The key's position in the `KeySet`.
    var index: Int
    var entry: YAMLMappingEntry
}
