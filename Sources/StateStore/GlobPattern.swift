#if canImport(Glibc)
import Glibc
#endif
import JobGraphBasics

/// An `inputs` or `outputs` pattern: `*` and `?` within one path segment, `**` for any number of folders.
///
/// Like a shell, wildcards do not match names starting with `.` unless the pattern's segment does, so
/// `**/*.swift` never walks into `.git`, `.build` or `.jobgraph`. `**` does not follow symbolic links to
/// folders (no cycles). A pattern without wildcards that names a folder means every file below it.
struct GlobPattern: Sendable, Hashable {
    enum Segment: Sendable, Hashable {
        case literal(String)
        case wildcard([Unicode.Scalar])
        case anyDepth
    }

    /// The pattern as written.
    let text: String
    let isAbsolute: Bool
    let segments: [Segment]

    init(_ text: String) {
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

    /// Whether the pattern has `*`, `?` or `**` anywhere.
    var hasWildcards: Bool {
        segments.contains { if case .literal = $0 { false } else { true } }
    }

    /// The path the pattern names when it has no wildcards, joined to `directory` unless absolute.
    func literalPath(in directory: String) -> String {
        var path = isAbsolute ? "" : directory
        for case .literal(let name) in segments { path += "/" + name }
        return path.isEmpty ? "/" : path
    }

    /// The path `text` names below `directory` when it is a plain relative path (no wildcards, no empty
    /// or `.` segments): what `GlobPattern(text).literalPath(in: directory)` gives, without splitting it
    /// into segments. `nil` for any other pattern. Why: parsing every declared path cost about 7,000
    /// instructions, a fifth of a no-op rerun's up-to-date pass (callgrind, 10,000 tasks).
    static func plainPath(_ text: String, in directory: String) -> String? {
        var segmentLength = 0
        var segmentIsDot = false
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "*"), UInt8(ascii: "?"):
                return nil
            case UInt8(ascii: "/"):
                if segmentLength == 0 || segmentLength == 1 && segmentIsDot { return nil }
                segmentLength = 0
            default:
                segmentIsDot = segmentLength == 0 && byte == UInt8(ascii: ".")
                segmentLength += 1
            }
        }
        if segmentLength == 0 || segmentLength == 1 && segmentIsDot { return nil }
        return String(joining: directory, text)
    }

    /// The regular files the pattern matches below `directory` (absolute paths, sorted by their bytes).
    func files(in directory: String) -> [String] {
        var found = Set<String>()
        if !hasWildcards {
            let path = literalPath(in: directory)
            switch FileStatus(path: path)?.kind {
            case .regular: found.insert(path)
            case .directory: Self.allFiles(below: path, into: &found)
            default: break
            }
        } else {
            walk(from: 0, in: isAbsolute ? "" : directory, into: &found)
        }
        return found.sorted { $0.precedesInByteOrder($1) }
    }

    /// Whether one name matches one wildcard segment.
    static func matches(_ name: String, _ pattern: [Unicode.Scalar]) -> Bool {
        let name = Array(name.unicodeScalars)
        if name.first == ".", pattern.first != "." { return false }
        // Greedy match with one backtrack point: the latest `*` and where its match began.
        var p = 0, n = 0
        var star: (pattern: Int, name: Int)?
        while n < name.count {
            if p < pattern.count, pattern[p] == "?" || (pattern[p] != "*" && pattern[p] == name[n]) {
                p += 1
                n += 1
            } else if p < pattern.count, pattern[p] == "*" {
                star = (p, n)
                p += 1
            } else if let last = star {
                p = last.pattern + 1
                n = last.name + 1
                star = (last.pattern, last.name + 1)
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }

    // MARK: - Walking

    private func walk(from index: Int, in directory: String, into found: inout Set<String>) {
        let isLast = index == segments.count - 1
        switch segments[index] {
        case .literal(let name):
            let path = String(joining: directory, name)
            if isLast {
                if FileStatus(path: path)?.kind == .regular { found.insert(path) }
            } else {
                walk(from: index + 1, in: path, into: &found)
            }
        case .wildcard(let pattern):
            for entry in DirectoryEntry.entries(of: directory) where Self.matches(entry.name, pattern) {
                let path = String(joining: directory, entry.name)
                if isLast {
                    if Self.isRegularFile(entry, at: path) { found.insert(path) }
                } else if Self.isFolder(entry, at: path, followingLinks: true) {
                    walk(from: index + 1, in: path, into: &found)
                }
            }
        case .anyDepth:
            if isLast {
                Self.allFiles(below: directory, into: &found)
                return
            }
            walk(from: index + 1, in: directory, into: &found)
            for entry in DirectoryEntry.entries(of: directory) where !entry.name.hasPrefix(".") {
                let path = String(joining: directory, entry.name)
                if Self.isFolder(entry, at: path, followingLinks: false) { walk(from: index, in: path, into: &found) }
            }
        }
    }

    /// Every regular file below `directory` at any depth, skipping hidden names and linked folders.
    static func allFiles(below directory: String, into found: inout Set<String>) {
        for entry in DirectoryEntry.entries(of: directory) where !entry.name.hasPrefix(".") {
            let path = String(joining: directory, entry.name)
            if isRegularFile(entry, at: path) {
                found.insert(path)
            } else if isFolder(entry, at: path, followingLinks: false) {
                allFiles(below: path, into: &found)
            }
        }
    }

    private static func isRegularFile(_ entry: DirectoryEntry, at path: String) -> Bool {
        switch entry.kind {
        case .regular: true
        case .symbolicLink, .unknown: FileStatus(path: path)?.kind == .regular
        case .directory, .other: false
        }
    }

    static func isFolder(_ entry: DirectoryEntry, at path: String, followingLinks: Bool) -> Bool {
        switch entry.kind {
        case .directory: true
        case .symbolicLink: followingLinks && FileStatus(path: path)?.kind == .directory
        case .unknown: FileStatus(path: path)?.kind == .directory && (followingLinks || !isSymbolicLink(path))
        case .regular, .other: false
        }
    }

    private static func isSymbolicLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK
    }
}
