import Foundation
import Glibc

/// A fresh folder under the system's temporary one, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/jobgraph-cache-XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else { throw POSIXError(.EIO) }
        path = String(cString: created)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)  // best effort: a leftover temp dir harms nothing
    }

    func write(_ text: String, to name: String, mode: Int = 0o644) throws {
        let file = path + "/" + name
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: file, atomically: false, encoding: .utf8)
        chmod(file, mode_t(mode))
    }

    func read(_ name: String) throws -> String {
        try String(contentsOfFile: path + "/" + name, encoding: .utf8)
    }

    func mode(of name: String) -> Int {
        var info = stat()
        return lstat(path + "/" + name, &info) == 0 ? Int(info.st_mode & 0o7777) : -1
    }

    func linkTarget(of name: String) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: path + "/" + name)
    }

    func files(below name: String) -> [String] {
        (FileManager.default.enumerator(atPath: path + "/" + name)?.allObjects as? [String] ?? []).sorted()
    }
}
