#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// What `state.db` and its `-wal` looked like when a run last closed them after finishing its writes,
/// kept in `state.db.checked`: size, modification and change times, inode. A file found exactly so was
/// changed by nothing since (the kernel sets the change time on every write, and no program can set it
/// back), so opening it again skips `PRAGMA quick_check`.
///
/// Why: quick_check reads every page, and the history makes the file grow by about 1.3 MB a run of
/// 10,000 tasks; with 25 runs kept it cost 517 M instructions, more than a no-op rerun's whole up-to-date
/// pass (callgrind). A file anything else wrote to, one a killed run left, and a first run are checked.
enum StateFileSeal {
    /// `state.db.checked` beside the database at `path`.
    static func sealPath(for path: String) -> String { path + ".checked" }

    /// Whether the database at `path` and its log are as the last seal recorded them.
    static func isIntact(_ path: String) -> Bool {
        guard let recorded = try? String(contentsOfFile: sealPath(for: path), encoding: .utf8) else { return false }
        return recorded == description(of: path)
    }

    /// Records how the database at `path` and its log look now; call once its connection is closed. A
    /// seal that cannot be written is removed, so the next open checks the file.
    static func seal(_ path: String) {
        do {
            try Data(description(of: path).utf8).write(to: URL(fileURLWithPath: sealPath(for: path)), options: .atomic)
        } catch {
            unlink(sealPath(for: path))
        }
    }

    /// The status of the database and its `-wal`, one line each; `-` for a file that is not there.
    private static func description(of path: String) -> String {
        [path, path + "-wal"].map { file in
            var info = stat()
            guard stat(file, &info) == 0 else { return "-\n" }
            return "\(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(info.st_ctim.tv_sec).\(info.st_ctim.tv_nsec) "
                + "\(info.st_ino)\n"
        }.joined()
    }
}
