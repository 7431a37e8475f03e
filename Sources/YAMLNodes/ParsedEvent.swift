internal import CYAML

/// One libyaml event, copied into Swift values: the composer may run on another thread than the
/// parser, which reuses its own buffers from one event to the next.
struct ParsedEvent {
    enum Kind: UInt8 {
        case streamEnd, documentStart, scalar, alias, sequenceStart, mappingStart, collectionEnd, other
    }

    let kind: Kind
    /// A scalar's style; `.plain` for other events.
    let style: YAMLScalarStyle
    /// Where the event starts and ends, zero-based as libyaml counts.
    let line: Int
    let column: Int
    let endLine: Int
    let endColumn: Int
    /// A scalar's text, or the anchor an alias names; empty for other events.
    let text: String
    /// The anchor (`&name`) a scalar or collection defines.
    let anchor: String?
    /// The tag written on a scalar or collection, as libyaml resolved it.
    let tag: String?

    init(_ event: borrowing yaml_event_t) {
        line = Int(event.start_mark.line)
        column = Int(event.start_mark.column)
        endLine = Int(event.end_mark.line)
        endColumn = Int(event.end_mark.column)
        var style = YAMLScalarStyle.plain
        var text = ""
        var anchor: UnsafeMutablePointer<yaml_char_t>?
        var tag: UnsafeMutablePointer<yaml_char_t>?
        switch event.type {
        case YAML_STREAM_END_EVENT:
            kind = .streamEnd
        case YAML_DOCUMENT_START_EVENT:
            kind = .documentStart
        case YAML_SCALAR_EVENT:
            kind = .scalar
            let scalar = event.data.scalar
            if let value = scalar.value, scalar.length > 0 {
                text = String(decoding: UnsafeBufferPointer(start: value, count: scalar.length), as: UTF8.self)
            }
            anchor = scalar.anchor
            tag = scalar.tag
            style = switch scalar.style {
            case YAML_SINGLE_QUOTED_SCALAR_STYLE: .singleQuoted
            case YAML_DOUBLE_QUOTED_SCALAR_STYLE: .doubleQuoted
            case YAML_LITERAL_SCALAR_STYLE: .literal
            case YAML_FOLDED_SCALAR_STYLE: .folded
            default: .plain
            }
        case YAML_ALIAS_EVENT:
            kind = .alias
            text = event.data.alias.anchor.map { String(cString: $0) } ?? ""
        case YAML_SEQUENCE_START_EVENT:
            kind = .sequenceStart
            anchor = event.data.sequence_start.anchor
            tag = event.data.sequence_start.tag
        case YAML_MAPPING_START_EVENT:
            kind = .mappingStart
            anchor = event.data.mapping_start.anchor
            tag = event.data.mapping_start.tag
        case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
            kind = .collectionEnd
        default:
            kind = .other
        }
        self.style = style
        self.text = text
        self.anchor = anchor.map { String(cString: $0) }
        self.tag = tag.map { String(cString: $0) }
    }
}

/// Why libyaml stopped reading, copied out of its parser.
struct ParserFailure {
    /// A reader error (bad encoding) carries a byte offset instead of a mark.
    let isReaderError: Bool
    let problem: String
    let problemOffset: Int
    let problemLine: Int
    let problemColumn: Int
    /// What the parser was in, and where that started.
    let context: String?
    let contextLine: Int
    let contextColumn: Int

    init(_ parser: borrowing yaml_parser_t) {
        isReaderError = parser.error == YAML_READER_ERROR
        problem = parser.problem.map { String(cString: $0) } ?? "unknown problem"
        problemOffset = Int(parser.problem_offset)
        problemLine = Int(parser.problem_mark.line)
        problemColumn = Int(parser.problem_mark.column)
        context = parser.context.map { String(cString: $0) }
        contextLine = Int(parser.context_mark.line)
        contextColumn = Int(parser.context_mark.column)
    }
}
