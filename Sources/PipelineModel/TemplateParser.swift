#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import JobGraphBasics
import YAMLNodes

/// Splits `{{ name }}` templates into segments once, at load time, checking every placeholder.
///
/// Like ninja's `$var` strings: an unknown variable is a diagnostic with a column, found before anything
/// runs, and substitution later is a typed operation on segments rather than text search.
enum TemplateParser {
    /// Parses `text`, the value of `node`, reporting each bad placeholder at its `{{`.
    ///
    /// - Returns: the template, or `nil` when a placeholder is malformed or names an unknown variable.
    static func parse(_ text: String, in node: YAMLNode, item: ItemScope, decoder: inout NodeDecoder) -> Template? {
        // Most strings hold no placeholder: decide that without copying them.
        let hasBrace = text.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.baseAddress.map { memchr($0, Int32(UInt8(ascii: "{")), bytes.count) != nil } ?? false
        } ?? text.utf8.contains(UInt8(ascii: "{"))
        guard hasBrace else { return Template(literal: text, location: node.location) }
        if let template = text.utf8.withContiguousStorageIfAvailable({ bytes in
            parse(bytes, in: node, item: item, decoder: &decoder)
        }) {
            return template
        }
        return Array(text.utf8).withUnsafeBufferPointer { parse($0, in: node, item: item, decoder: &decoder) }
    }

    private static func parse(
        _ bytes: UnsafeBufferPointer<UInt8>, in node: YAMLNode, item: ItemScope, decoder: inout NodeDecoder
    ) -> Template? {
        let openings = openingOffsets(in: bytes)
        guard !openings.isEmpty else {
            return Template(literal: String(decoding: bytes, as: UTF8.self), location: node.location)
        }
        let locations = decoder.source.openingLocations(in: node, expectedCount: openings.count)

        var segments: [Template.Segment] = []
        segments.reserveCapacity(openings.count * 2 + 1)
        var isValid = true
        var cursor = 0
        for (ordinal, start) in openings.enumerated() where start >= cursor {
            let location = locations?[ordinal] ?? node.location
            guard let close = closingOffset(in: bytes, from: start + 2) else {
                decoder.diagnostics.error("unterminated '{{' in template; close it with '}}'", at: location)
                isValid = false
                cursor = bytes.count
                break
            }
            if start > cursor { segments.append(.literal(String(decoding: bytes[cursor..<start], as: UTF8.self))) }
            cursor = close + 2
            guard let path = variablePath(bytes[(start + 2)..<close]) else {
                let written = String(decoding: bytes[start..<(close + 2)], as: UTF8.self)
                decoder.diagnostics.error(
                    "invalid placeholder '\(NodeDecoder.shortened(written))'; write '{{ name }}' with the name of a variable",
                    at: location)
                isValid = false
                continue
            }
            if let problem = problem(with: path, item: item, decoder: decoder) {
                decoder.diagnostics.error(problem, at: location)
                isValid = false
                continue
            }
            segments.append(.variable(path: path, location: location))
        }
        if cursor < bytes.count { segments.append(.literal(String(decoding: bytes[cursor...], as: UTF8.self))) }
        return isValid ? Template(segments: segments, location: node.location) : nil
    }

    /// Offsets of each `{{`, scanning left to right without overlap, as `SourceText` scans the file.
    private static func openingOffsets(in bytes: UnsafeBufferPointer<UInt8>) -> [Int] {
        var offsets: [Int] = []
        var index = 0
        while index + 1 < bytes.count {
            if bytes[index] == UInt8(ascii: "{"), bytes[index + 1] == UInt8(ascii: "{") {
                offsets.append(index)
                index += 2
            } else {
                index += 1
            }
        }
        return offsets
    }

    private static func closingOffset(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == UInt8(ascii: "}"), bytes[index + 1] == UInt8(ascii: "}") { return index }
            index += 1
        }
        return nil
    }

    /// `name` or `item.field.sub` between the braces, spaces around it allowed; `nil` when malformed.
    ///
    /// Each component is an ASCII letter or `_`, then letters, digits, `_` or `-`.
    private static func variablePath(_ inner: Slice<UnsafeBufferPointer<UInt8>>) -> [String]? {
        var slice = inner
        while let first = slice.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { slice.removeFirst() }
        while let last = slice.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { slice.removeLast() }
        var path: [String] = []
        var componentStart = slice.startIndex
        for index in slice.indices {
            let byte = slice[index]
            let isLetter = (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") || byte == UInt8(ascii: "_")
            let isDigitOrDash = (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
            if byte == UInt8(ascii: ".") {
                guard index > componentStart else { return nil }
                path.append(String(decoding: slice[componentStart..<index], as: UTF8.self))
                componentStart = index + 1
            } else if !(isLetter || (isDigitOrDash && index > componentStart)) {
                return nil
            }
        }
        guard componentStart < slice.endIndex else { return nil }
        path.append(String(decoding: slice[componentStart...], as: UTF8.self))
        return path
    }

    /// What is wrong with a well-formed placeholder here, as a message; `nil` when it is fine.
    private static func problem(with path: [String], item: ItemScope, decoder: NodeDecoder) -> String? {
        let name = path[0]
        let dotted = path.joined(separator: ".")
        if name == "item" {
            switch item {
            case .none:
                return "'item' is only defined in a task with 'foreach'"
            case .foreachSource:
                return "'item' cannot be used in 'foreach' itself; the items are not known until it is read"
            case .listed where path.count > 1:
                return "'\(dotted)' needs 'foreach: {from: FILE}'; items listed in the file are strings, so write '{{ item }}'"
            case .listed, .file:
                return nil
            }
        }
        // In a fan-out, `index` is the item's position, over any var of that name; elsewhere it is a var.
        if name == "index" {
            switch item {
            case .none: break
            case .foreachSource: return "'index' cannot be used in 'foreach' itself; the items are not known until it is read"
            case .listed, .file: return path.count > 1 ? "'index' is a number and has no field '\(path[1])'; write '{{ index }}'" : nil
            }
        }
        if name == "attempt" {
            guard decoder.allowsAttempt else {
                return "'attempt' is only defined in a task's 'run', 'parallel', 'env', 'on_success' and 'on_failure'"
            }
            return path.count > 1 ? "'attempt' is a number and has no field '\(path[1])'; write '{{ attempt }}'" : nil
        }
        if decoder.variableSet.contains(name) {
            return path.count > 1 ? "variable '\(name)' is a string and has no field '\(path[1])'; write '{{ \(name) }}'" : nil
        }
        var candidates = decoder.variableNames
        if case .listed = item { candidates += ["item", "index"] }
        if case .file = item { candidates += ["item", "index"] }
        let hint = Suggestion.closest(to: name, in: candidates).map { "; did you mean '\($0)'?" }
            ?? "; define it under 'vars'"
        return "unknown variable '\(name)' in template\(hint)"
    }
}
