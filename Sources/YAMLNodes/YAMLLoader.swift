import JobGraphBasics

/// Turns YAML text into a tree of located nodes, on libyaml's event API.
///
/// This is the composer libyaml leaves to its callers: it resolves anchors and aliases (within a
/// budget), merge keys (`<<`), and plain scalars by the YAML 1.2 core schema, and refuses
/// duplicate keys, several documents and excessive nesting. It knows nothing about pipelines.
public enum YAMLLoader {
    /// Parses one YAML document.
    ///
    /// - Parameters:
    ///   - bytes: the file's contents; UTF-8 (or UTF-16 with a byte-order mark, as libyaml reads).
    ///   - file: the path as the user typed it, for locations.
    ///   - diagnostics: receives every problem found, each with its location.
    /// - Returns: the document's root node, or `nil` when the text is not usable YAML.
    ///   - streaming: hands over the entries of one top-level mapping as they are read, instead of
    ///     keeping them in the tree; `nil` keeps everything.
    public static func load(
        _ bytes: [UInt8], file: String, limits: YAMLLimits = .standard, streaming: YAMLEntryStream? = nil,
        diagnostics: inout Diagnostics
    ) -> YAMLNode? {
        let composer = Composer(file: file, limits: limits, stream: streaming)
        let root = bytes.withUnsafeBufferPointer { buffer in composer.compose(buffer) }
        diagnostics.append(contentsOf: composer.diagnostics)
        return composer.diagnostics.hasErrors ? nil : root
    }

    /// Parses YAML held in a string; for tests and tools.
    public static func load(
        _ text: String, file: String = "<string>", limits: YAMLLimits = .standard, diagnostics: inout Diagnostics
    ) -> YAMLNode? {
        load(Array(text.utf8), file: file, limits: limits, diagnostics: &diagnostics)
    }
}

/// Hands over the entries of the mapping under one top-level key as each is complete, so a huge
/// mapping (a million tasks) never exists as a tree: each entry can be decoded and dropped.
///
/// Only a mapping written directly as the value of `key` in a top-level mapping streams, and only one
/// with no anchor or tag (an alias could not refer to it). Its entries are checked for nothing
/// but YAML syntax: the receiver must find duplicate keys itself. Merge keys (`<<`) are not streamed;
/// what they bring in stays in the tree's (otherwise empty) mapping.
public final class YAMLEntryStream {
    /// The top-level key whose mapping streams.
    public let key: String
    /// Called once, when the mapping starts, with the top-level entries written before `key`.
    let begin: ([YAMLMappingEntry]) -> Void
    /// Called with each entry, in file order.
    let entry: (YAMLMappingEntry) -> Void
    /// Whether the mapping was found and streamed (so the tree's mapping under `key` lacks its entries).
    @exclusivity(unchecked) public fileprivate(set) var didStream = false
    /// How many entries were handed over (unchecked access, as in `Composer`).
    @exclusivity(unchecked) public fileprivate(set) var entryCount = 0

    public init(key: String, begin: @escaping ([YAMLMappingEntry]) -> Void, entry: @escaping (YAMLMappingEntry) -> Void) {
        self.key = key
        self.begin = begin
        self.entry = entry
    }
}

/// Builds the tree from libyaml's events, taken from an `EventFeed`.
private final class Composer {
    let file: String
    let limits: YAMLLimits
    // Unchecked: the composer is used by one call on one thread, and the runtime's exclusivity
    // check on each access of a class's stored property cost 8% of loading a large file (callgrind).
    @exclusivity(unchecked) var diagnostics = Diagnostics()
    @exclusivity(unchecked) private var stack: [YAMLNode.Builder] = []
    @exclusivity(unchecked) private var anchors: [String: (node: YAMLNode, size: Int)] = [:]
    @exclusivity(unchecked) private var expandedNodes = 0
    @exclusivity(unchecked) private var root: YAMLNode?
    @exclusivity(unchecked) private var documentCount = 0

    private let stream: YAMLEntryStream?

    init(file: String, limits: YAMLLimits, stream: YAMLEntryStream?) {
        self.file = file
        self.limits = limits
        self.stream = stream
    }

    func compose(_ buffer: UnsafeBufferPointer<UInt8>) -> YAMLNode? {
        guard let feed = EventFeed(buffer) else {
            diagnostics.error("out of memory while starting the YAML parser", at: nil)
            return nil
        }
        var reachedEnd = true
        reading: while let batch = feed.next() {
            while let event = batch.takeNext() {
                if !handle(event) {
                    reachedEnd = false
                    break reading
                }
            }
        }
        // Read ahead past a stop (a second document), libyaml may have failed on text this file is
        // not judged by.
        let failure = feed.closeAndTakeFailure()
        if reachedEnd, let failure {
            report(failure, in: buffer)
            return nil
        }
        if diagnostics.hasErrors { return nil }
        guard let root, !(root.scalar?.isNull == true && root.scalar?.isPlain == true) else {
            diagnostics.error("the file is empty; expected a YAML document", at: location(line: 0, column: 0))
            return nil
        }
        return root
    }

    /// Handles one event; returns `false` at the end of the stream or after a fatal problem.
    private func handle(_ event: consuming ParsedEvent) -> Bool {
        let start = location(line: event.line, column: event.column)
        switch event.kind {
        case .streamEnd:
            return false
        case .documentStart:
            documentCount += 1
            if documentCount > 1 {
                diagnostics.error("the file holds more than one YAML document; put everything in the first", at: start)
                return false
            }
        case .scalar:
            let text = event.text
            let isPlain = event.style == .plain
            guard let value = resolve(text, isPlain: isPlain, tag: event.tag, at: start) else { return true }
            let scalarValue = YAMLScalar(
                text: text, value: value, isPlain: isPlain, style: event.style,
                endMarkLine: event.endLine, endMarkColumn: event.endColumn)
            let node = YAMLNode(.scalar(scalarValue), at: start)
            return add(node, size: 1, anchor: event.anchor)
        case .alias:
            let name = event.text
            guard let target = anchors[name] else {
                diagnostics.error("alias '*\(name)' refers to no anchor '&\(name)' defined before it", at: start)
                return true
            }
            expandedNodes += target.size
            if expandedNodes > limits.aliasExpansionNodes {
                diagnostics.error(
                    "aliases expand to more than \(limits.aliasExpansionNodes) nodes; refusing to load (a 'billion laughs' file?)",
                    at: start)
                return false
            }
            return add(target.node, size: target.size, anchor: nil)
        case .sequenceStart:
            return push(YAMLNode.Builder(isMapping: false, location: start, anchor: event.anchor, tag: event.tag))
        case .mappingStart:
            return push(YAMLNode.Builder(isMapping: true, location: start, anchor: event.anchor, tag: event.tag))
        case .collectionEnd:
            guard var builder = stack.popLast() else { return true }
            if let tag = builder.tag, tag != (builder.isMapping ? "tag:yaml.org,2002:map" : "tag:yaml.org,2002:seq") {
                diagnostics.error("unsupported YAML tag '\(tag)'", at: builder.location)
            }
            return add(builder.build(), size: builder.size, anchor: builder.anchor)
        case .other:
            break
        }
        return true
    }

    private func push(_ builder: consuming YAMLNode.Builder) -> Bool {
        if stack.count >= limits.depth {
            diagnostics.error("nesting is deeper than \(limits.depth) levels", at: builder.location)
            return false
        }
        if let stream, !stream.didStream, builder.isMapping, builder.anchor == nil, builder.tag == nil,
           stack.count == 1, let root = stack.first, root.isMapping, root.pendingKeyText == stream.key {
            stream.didStream = true
            stream.begin(root.entriesSoFar)
            builder.sink = { entry in
                stream.entryCount += 1
                stream.entry(entry)
            }
        }
        stack.append(builder)
        return true
    }

    /// Attaches a finished node to the collection being built, or makes it the document's root.
    private func add(_ node: consuming YAMLNode, size: Int, anchor: String?) -> Bool {
        if let anchor {
            anchors[anchor] = (node, size)
        }
        guard !stack.isEmpty else {
            root = node
            return true
        }
        stack[stack.count - 1].add(node, size: size, diagnostics: &diagnostics)
        return true
    }

    private func resolve(_ text: String, isPlain: Bool, tag: String?, at location: SourceLocation) -> YAMLScalarValue? {
        switch tag {
        case nil, "!":
            return isPlain ? CoreSchema.resolve(plain: text) : .string(text)
        case "tag:yaml.org,2002:str":
            return .string(text)
        case "tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null":
            let value = CoreSchema.resolve(plain: text)
            let expected = tag!.dropFirst("tag:yaml.org,2002:".count)
            let matches = switch value {
            case .integer: expected == "int" || expected == "float"
            case .float: expected == "float"
            case .bool: expected == "bool"
            case .null: expected == "null"
            case .string: false
            }
            guard matches else {
                diagnostics.error("'\(text)' is not a valid !!\(expected)", at: location)
                return nil
            }
            if expected == "float", case .integer(let integer) = value { return .float(Double(integer)) }
            return value
        default:
            diagnostics.error("unsupported YAML tag '\(tag!)'", at: location)
            return nil
        }
    }

    private func report(_ failure: ParserFailure, in buffer: UnsafeBufferPointer<UInt8>) {
        if failure.isReaderError {
            // Reader errors carry a byte offset, not a mark.
            let at = location(ofByte: failure.problemOffset, in: buffer)
            let problem = failure.problem
            let what = problem.contains("UTF-8") || problem.contains("UTF-16")
                ? "the file is not valid UTF-8 (\(problem))" : "cannot read the file: \(problem)"
            diagnostics.error(what, at: at)
            return
        }
        var message = "YAML syntax error: \(failure.problem)"
        if let context = failure.context {
            message += " (\(context) that starts at line \(failure.contextLine + 1), column \(failure.contextColumn + 1))"
        }
        diagnostics.error(message, at: location(line: failure.problemLine, column: failure.problemColumn))
    }

    private func location(line: Int, column: Int) -> SourceLocation {
        SourceLocation(file: file, line: line + 1, column: column + 1)
    }

    private func location(ofByte offset: Int, in buffer: UnsafeBufferPointer<UInt8>) -> SourceLocation {
        var line = 1, column = 1
        for byte in buffer.prefix(min(offset, buffer.count)) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return SourceLocation(file: file, line: line, column: column)
    }
}

extension YAMLNode {
    /// Collects a list's items or a mapping's entries until its end event.
    ///
    /// A value kept on the composer's stack, not an object: one per list and mapping of the file, so
    /// a class cost an allocation each and a runtime exclusivity check on every field access.
    fileprivate struct Builder {
        let isMapping: Bool
        let location: SourceLocation
        private(set) var size = 1
        private var items: [YAMLNode] = []
        private var entries: [YAMLMappingEntry] = []
        private var pendingKey: YAMLNode?
        /// What few collections have, `nil` for the rest: a builder is made, moved and destroyed for
        /// every list and mapping, and destroying its rarely used fields one by one was 3% of loading
        /// a large file (callgrind).
        private var rare: Rare?

        /// A builder's rarely used parts (one loader call on one thread: unchecked access).
        private final class Rare {
            @exclusivity(unchecked) var anchor: String?
            @exclusivity(unchecked) var tag: String?
            @exclusivity(unchecked) var keyLocations: [String: SourceLocation] = [:]
            @exclusivity(unchecked) var merged: [YAMLNode] = []
            @exclusivity(unchecked) var sink: ((YAMLMappingEntry) -> Void)?
        }

        var anchor: String? { rare?.anchor }
        var tag: String? { rare?.tag }
        /// Receives each entry instead of `entries` (see `YAMLEntryStream`).
        var sink: ((YAMLMappingEntry) -> Void)? {
            get { rare?.sink }
            set { rareParts().sink = newValue }
        }

        private mutating func rareParts() -> Rare {
            if let rare { return rare }
            let made = Rare()
            rare = made
            return made
        }

        /// The text of a key read but not yet paired with its value.
        var pendingKeyText: String? { pendingKey?.scalar?.text }
        var entriesSoFar: [YAMLMappingEntry] { entries }

        init(isMapping: Bool, location: SourceLocation, anchor: String?, tag: String?) {
            self.isMapping = isMapping
            self.location = location
            if anchor != nil || tag != nil {
                let parts = rareParts()
                parts.anchor = anchor
                parts.tag = tag
            }
        }

        /// Takes `node` over (`consuming`), so it moves into the list or entry instead of being copied:
        /// copying and destroying nodes was a fifth of composing a large file (callgrind).
        mutating func add(_ node: consuming YAMLNode, size: Int, diagnostics: inout Diagnostics) {
            self.size += size
            guard isMapping else {
                // Room for a few items at once: grown one by one, a two-item list was allocated twice.
                if items.isEmpty { items.reserveCapacity(4) }
                items.append(node)
                return
            }
            guard let key = pendingKey.take() else {
                pendingKey = node
                return
            }
            guard case .scalar(let scalar) = key.content else {
                if let sink {
                    sink(YAMLMappingEntry(key: key, value: node))
                } else {
                    entries.append(YAMLMappingEntry(key: key, value: node))
                }
                return
            }
            if scalar.isPlain && scalar.text.utf8.count == 2 && scalar.text == "<<" {
                rareParts().merged.append(node)
                return
            }
            if let sink {
                sink(YAMLMappingEntry(key: key, value: node))
                return
            }
            if let first = location(ofKey: scalar.text) {
                diagnostics.error(
                    "duplicate key '\(scalar.text)' (first at line \(first.line), column \(first.column))", at: key.location)
                return
            }
            remember(scalar.text, at: key.location)
            if entries.isEmpty { entries.reserveCapacity(4) }
            entries.append(YAMLMappingEntry(key: key, value: node))
        }

        /// Most mappings have a handful of keys: a scan of them beats hashing every key; a dictionary
        /// takes over past `scanLimit` so a huge mapping (100,000 tasks) stays linear.
        private static let scanLimit = 16

        private func location(ofKey text: String) -> SourceLocation? {
            if let rare, !rare.keyLocations.isEmpty { return rare.keyLocations[text] }
            return entries.first { $0.keyText == text }?.key.location
        }

        /// Notes a key about to be added; from `scanLimit` keys on, in the dictionary.
        private mutating func remember(_ text: String, at location: SourceLocation) {
            guard entries.count >= Self.scanLimit else { return }
            let parts = rareParts()
            if parts.keyLocations.isEmpty {
                for entry in entries { if let key = entry.keyText { parts.keyLocations[key] = entry.key.location } }
            }
            parts.keyLocations[text] = location
        }

        mutating func build() -> YAMLNode {
            guard isMapping else { return YAMLNode(.sequence(items), at: location) }
            // Merge keys: entries written here win over merged ones, earlier merges over later.
            for source in rare?.merged ?? [] {
                let mappings = source.sequence ?? [source]
                for mapping in mappings {
                    for entry in mapping.mapping ?? [] {
                        guard let text = entry.keyText, location(ofKey: text) == nil else { continue }
                        remember(text, at: entry.key.location)
                        entries.append(entry)
                    }
                }
            }
            return YAMLNode(.mapping(entries), at: location)
        }
    }
}
