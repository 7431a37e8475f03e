#if canImport(Glibc)
import Glibc
#endif

/// What `stat(2)` says about a path, following symbolic links: enough to tell whether a file changed.
struct FileStatus: Sendable, Equatable {
    enum Kind: Sendable, Equatable { case regular, directory, other }

    var kind: Kind
    /// Bytes.
    var size: Int64
    /// Modification time in nanoseconds since 1970.
    var modificationNanoseconds: Int64
    var inode: UInt64

    /// The status of `path`, or `nil` when it does not exist or cannot be examined.
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The status of `path` taken relative to the open folder `folder` (an absolute `path` ignores it), or
    /// `nil` when it does not exist or cannot be examined.
    init?(path: String, inFolder folder: Int32) {
        var info = stat()
        guard fstatat(folder, path, &info, 0) == 0 else { return nil }
        self.init(info)
    }

    init(_ info: stat) {
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        default: kind = .other
        }
        size = Int64(info.st_size)
        modificationNanoseconds = Int64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtim.tv_nsec)
        inode = UInt64(info.st_ino)
    }

    /// Whether a hash recorded for `record` still describes the file with this status: the cheap
    /// pre-check that spares re-reading unchanged files.
    func matches(_ record: FileRecord) -> Bool {
        size == record.size && modificationNanoseconds == record.modificationNanoseconds && inode == record.inode
    }
}

/// The content hash of one file as last read, with the status it had then; `path` is the store's key.
struct FileRecord: Sendable, Equatable {
    var path: String
    var size: Int64
    var modificationNanoseconds: Int64
    var inode: UInt64
    /// Lower-case hex SHA-256 of the content.
    var sha256: String
}
