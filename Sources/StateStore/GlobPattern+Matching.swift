import JobGraphBasics

/// Matching one path against a pattern, and the folders whose changes can alter what it matches: what
/// watch mode needs, where a file may be gone already and walking the tree for each change would be waste.
extension GlobPattern {
    /// Whether `path` (absolute) is a file the pattern names below `directory`, judged by its name alone,
    /// with the rules of `files(in:)`: wildcards skip names starting with `.`, and a pattern without
    /// wildcards names that file or, for a folder, every file below it but the hidden ones.
    func matches(path: String, in directory: String) -> Bool {
        let base = isAbsolute ? "" : directory
        guard path.hasPrefix(base + "/") else { return false }
        let relative = path.dropFirst(base.count + 1)
        if !hasWildcards {
            let components = relative.split(separator: "/")
            let names = segments.compactMap { segment -> String? in if case .literal(let name) = segment { name } else { nil } }
            // A folder names the files below it that are not hidden, nor in a hidden folder.
            return components.count >= names.count && zip(components, names).allSatisfy { $0 == $1 }
                && !components.dropFirst(names.count).contains { $0.hasPrefix(".") }
        }
        return matches(path: String(relative))
    }

    /// The folders to watch so that every change to what the pattern matches below `directory` is seen:
    /// the folder holding its literal start, and, when a wildcard or a named folder reaches deeper,
    /// every folder below that (hidden and linked ones skipped, as `files(in:)` skips them). A folder
    /// that does not exist yet is stood for by its nearest existing parent.
    /// - Returns: the folders, the first being the one the rest lie below; `isRecursive` when the pattern
    ///   reaches below that first folder, so a folder created there must be watched too.
    func watchFolders(in directory: String) -> (folders: [String], isRecursive: Bool) {
        var start = isAbsolute ? "" : directory
        var rest = segments[...]
        while let segment = rest.first, case .literal(let name) = segment {
            let next = String(joining: start, name)
            guard FileStatus(path: next)?.kind == .directory else { break }
            start = next
            rest = rest.dropFirst()
        }
        if start.isEmpty { start = "/" }
        // The last segment is a file (or its wildcard) in `start`: watching `start` sees it come and go.
        let reachesDeeper = rest.count > 1 || (rest.isEmpty && !hasWildcards)
        guard reachesDeeper else { return ([start], false) }
        return (Self.folders(from: start), true)
    }

    /// `start` and every folder below it, hidden and linked ones skipped.
    static func folders(from start: String) -> [String] {
        var folders = [start]
        allFolders(below: start, into: &folders)
        return folders
    }

    private static func allFolders(below directory: String, into folders: inout [String]) {
        for entry in DirectoryEntry.entries(of: directory) where !entry.name.hasPrefix(".") {
            let path = String(joining: directory, entry.name)
            if isFolder(entry, at: path, followingLinks: false) {
                folders.append(path)
                allFolders(below: path, into: &folders)
            }
        }
    }
}
