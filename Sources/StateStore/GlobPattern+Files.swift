#if canImport(Glibc)
import Glibc
#endif
import JobGraphBasics

/// Finding the files a pattern names on disk.
extension GlobPattern {
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
            for entry in DirectoryEntry.entries(of: directory) where Self.matches(entry.name[...], pattern) {
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
