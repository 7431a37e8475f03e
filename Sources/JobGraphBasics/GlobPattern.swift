/// An `inputs` or `outputs` pattern: `*` and `?` within one path segment, `**` for any number of folders.
///
/// Like a shell, wildcards do not match names starting with `.` unless the pattern's segment does, so
/// `**/*.swift` never walks into `.git`, `.build` or `.jobgraph`. `**` does not follow symbolic links to
/// folders (no cycles). A pattern without wildcards that names a folder means every file below it.
package struct GlobPattern: Sendable, Hashable {
    package enum Segment: Sendable, Hashable {
        case literal(String)
        case wildcard([Unicode.Scalar])
        case anyDepth
    }

    /// The pattern as written.
    package let text: String
    package let isAbsolute: Bool
    package let segments: [Segment]

    package init(_ text: String) {
        self.text = text
        isAbsolute = text.hasPrefix("/")
        var segments: [Segment] = []
        for part in text.split(separator: "/", omittingEmptySubsequences: true) where part != "." {
            if part == "**" {
                if segments.last != .anyDepth { segments.append(.anyDepth) }
            } else if part.utf8.contains(where: { $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "?") }) {
                segments.append(.wildcard(Array(part.unicodeScalars)))
            } else {
                segments.append(.literal(String(part)))
            }
        }
        self.segments = segments
    }

    /// Whether `text` has a `*` or `?`: whether `GlobPattern(text).hasWildcards`, without parsing it.
    package static func hasWildcards(_ text: String) -> Bool {
        text.utf8.contains { $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "?") }
    }

    /// Whether the pattern has `*`, `?` or `**` anywhere.
    package var hasWildcards: Bool {
        segments.contains { if case .literal = $0 { false } else { true } }
    }

    /// The path the pattern names when it has no wildcards, joined to `directory` unless absolute.
    package func literalPath(in directory: String) -> String {
        var path = isAbsolute ? "" : directory
        for case .literal(let name) in segments { path += "/" + name }
        return path.isEmpty ? "/" : path
    }

    /// The path `text` names below `directory` when it is a plain relative path (no wildcards, no empty
    /// or `.` segments): what `GlobPattern(text).literalPath(in: directory)` gives, without splitting it
    /// into segments. `nil` for any other pattern. Why: parsing every declared path cost about 7,000
    /// instructions, a fifth of a no-op rerun's up-to-date pass (callgrind, 10,000 tasks).
    package static func plainPath(_ text: String, in directory: String) -> String? {
        isPlainRelative(text) ? String(joining: directory, text) : nil
    }

    /// Whether `text` is a plain relative path: no wildcards, no empty or `.` segments (see `plainPath`).
    package static func isPlainRelative(_ text: String) -> Bool {
        var segmentLength = 0
        var segmentIsDot = false
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "*"), UInt8(ascii: "?"):
                return false
            case UInt8(ascii: "/"):
                if segmentLength == 0 || segmentLength == 1 && segmentIsDot { return false }
                segmentLength = 0
            default:
                segmentIsDot = segmentLength == 0 && byte == UInt8(ascii: ".")
                segmentLength += 1
            }
        }
        return !(segmentLength == 0 || segmentLength == 1 && segmentIsDot)
    }

    /// Whether one name matches one wildcard segment.
    package static func matches(_ name: Substring, _ pattern: [Unicode.Scalar]) -> Bool {
        // Walked in place, without copying the name's scalars (perf record, no-op rerun of
        // Benchmarks/snakemake.sh at 2,000 samples: matching `sorted/*.bam` against 4,000 outputs).
        let name = name.unicodeScalars
        if name.first == ".", pattern.first != "." { return false }
        // Greedy match with one backtrack point: the latest `*` and where its match began.
        var p = 0, n = name.startIndex
        var star: (pattern: Int, name: String.Index)?
        while n < name.endIndex {
            if p < pattern.count, pattern[p] == "?" || (pattern[p] != "*" && pattern[p] == name[n]) {
                p += 1
                n = name.index(after: n)
            } else if p < pattern.count, pattern[p] == "*" {
                star = (p, n)
                p += 1
            } else if let last = star {
                p = last.pattern + 1
                n = name.index(after: last.name)
                star = (last.pattern, n)
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }

    // MARK: - Matching a path without the disk

    /// Whether the pattern names `path` (without `.` or `..` segments, relative to the same folder as the
    /// pattern, or both absolute), as `files(in:)` would find it on disk, by its names alone: for comparing one
    /// task's declared paths with another's before anything exists, and for watch mode's changed files.
    package func matches(path: String) -> Bool {
        // Without `**`, each segment names one name: compared in order as the path is walked, without
        // splitting it or the sets below (perf record, no-op rerun of Benchmarks/snakemake.sh at 2,000
        // samples: splitting was two thirds of matching `sorted/*.bam` against 4,000 outputs).
        guard segments.contains(.anyDepth) else {
            let bytes = path.utf8
            var matched = 0
            var position = bytes.startIndex
            var nameStart = position
            while true {
                if position == bytes.endIndex || bytes[position] == UInt8(ascii: "/") {
                    if nameStart < position {
                        guard matched < segments.count else { return false }
                        let name = path[nameStart..<position]
                        switch segments[matched] {
                        case .literal(let literal): if name != literal { return false }
                        case .wildcard(let pattern): if !Self.matches(name, pattern) { return false }
                        case .anyDepth: return false  // excluded above
                        }
                        matched += 1
                    }
                    if position == bytes.endIndex { return matched == segments.count }
                    nameStart = bytes.index(after: position)
                }
                position = bytes.index(after: position)
            }
        }
        let names = path.split(separator: "/")
        // Positions in `names` the pattern's first `index` segments can end at; `**` does not enter hidden folders.
        var ends: Set<Int> = [0]
        for segment in segments {
            var next: Set<Int> = []
            for end in ends {
                switch segment {
                case .literal(let name):
                    if end < names.count, names[end] == name { next.insert(end + 1) }
                case .wildcard(let pattern):
                    if end < names.count, Self.matches(names[end], pattern) { next.insert(end + 1) }
                case .anyDepth:
                    var position = end
                    next.insert(position)
                    while position < names.count, !names[position].hasPrefix(".") {
                        position += 1
                        next.insert(position)
                    }
                }
            }
            ends = next
            if ends.isEmpty { return false }
        }
        return ends.contains(names.count)
    }

    /// The folder before the pattern's first wildcard, absolute when the pattern is, `""` for none: every
    /// path the pattern names is below it.
    package var fixedFolder: String {
        var folder = ""
        for segment in segments {
            guard case .literal(let name) = segment else { break }
            folder += folder.isEmpty && !isAbsolute ? name : "/" + name
        }
        return folder
    }
}
