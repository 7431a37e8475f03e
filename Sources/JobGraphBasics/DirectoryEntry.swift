import Glibc

/// One name in a directory, with the type `readdir` reported when the file system gives one.
public struct DirectoryEntry: Sendable {
    public enum Kind: Sendable { case regular, directory, symbolicLink, other, unknown }
    public var name: String
    public var kind: Kind

    /// The entries of `path` except `.` and `..`, in no particular order; empty when it cannot be listed.
    public static func entries(of path: String) -> [DirectoryEntry] {
        listing(of: path) ?? []
    }

    /// The entries of `path` except `.` and `..`, in no particular order; `nil` when it cannot be listed.
    public static func listing(of path: String) -> [DirectoryEntry]? {
        guard let directory = opendir(path.isEmpty ? "/" : path) else { return nil }
        defer { closedir(directory) }
        var entries: [DirectoryEntry] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name == "." || name == ".." { continue }
            let kind: Kind = switch Int32(entry.pointee.d_type) {
            case Int32(DT_REG): .regular
            case Int32(DT_DIR): .directory
            case Int32(DT_LNK): .symbolicLink
            case Int32(DT_UNKNOWN): .unknown
            default: .other
            }
            entries.append(DirectoryEntry(name: name, kind: kind))
        }
        return entries
    }
}
