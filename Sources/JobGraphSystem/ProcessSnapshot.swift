import Glibc

/// A snapshot of the processes on this machine, read from `/proc/<pid>/stat`: who is whose parent, and
/// each one's group, session and state.
///
/// This kernel may lack `/proc/<pid>/task/<tid>/children` (`CONFIG_PROC_CHILDREN`), so descendants are found
/// by reading every process's parent. A process that ends while the snapshot is taken is simply missing.
public struct ProcessSnapshot: Sendable {
    /// One process as `/proc/<pid>/stat` describes it.
    public struct Entry: Hashable, Sendable {
        public var id: pid_t
        public var parent: pid_t
        public var group: pid_t
        public var session: pid_t
        /// The state letter: `R`, `S`, `D`, `T` (stopped), `Z` (exited, not yet reaped) …
        public var state: UInt8
        /// The executable's name as the kernel keeps it (`comm`, at most 15 bytes).
        public var command: String

        /// Whether the process has exited and waits only to be reaped.
        public var isZombie: Bool { state == UInt8(ascii: "Z") }
    }

    /// Every process readable now, by id.
    public let entries: [pid_t: Entry]

    /// Reads `/proc` now.
    public init() {
        var entries: [pid_t: Entry] = [:]
        if let directory = opendir("/proc") {
            while let item = readdir(directory) {
                let name = withUnsafeBytes(of: item.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                guard let id = pid_t(name), let entry = Self.entry(of: id) else { continue }
                entries[id] = entry
            }
            closedir(directory)
        }
        self.entries = entries
    }

    /// Whether this process has no child, running or exited, and so no descendant (one whose parent
    /// exited is reparented to this subreaper: a child again), as each thread's `children` list says;
    /// `false` on a kernel without those lists. A few small reads, where `init()` reads every process.
    public static func hasNoChildren() -> Bool {
        guard readSmallFile("/proc/self/task/\(getpid())/children") == [] else { return false }
        guard let directory = opendir("/proc/self/task") else { return false }
        defer { closedir(directory) }
        while let item = readdir(directory) {
            let name = withUnsafeBytes(of: item.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            // A thread gone meanwhile had its children passed to another thread, whose list shows them.
            guard pid_t(name) != nil, let children = readSmallFile("/proc/self/task/\(name)/children") else { continue }
            if !children.isEmpty { return false }
        }
        return true
    }

    /// The processes below `ancestor` (children, their children …), parents before their children.
    public func descendants(of ancestor: pid_t) -> [Entry] {
        var children: [pid_t: [Entry]] = [:]
        for entry in entries.values { children[entry.parent, default: []].append(entry) }
        var found: [Entry] = []
        var frontier = [ancestor]
        while let next = frontier.popLast() {
            for child in (children[next] ?? []).sorted(by: { $0.id < $1.id }) where child.id != ancestor {
                found.append(child)
                frontier.append(child.id)
            }
        }
        return found
    }

    /// The process `id` as `/proc/<id>/stat` describes it now, or `nil` once it is gone (reaped).
    public static func entry(of id: pid_t) -> Entry? {
        guard let bytes = readSmallFile("/proc/\(id)/stat") else { return nil }
        // "pid (comm) state ppid pgrp session …": comm may hold spaces and parentheses, so split after the
        // last ')'.
        guard let open = bytes.firstIndex(of: UInt8(ascii: "(")), let close = bytes.lastIndex(of: UInt8(ascii: ")")),
              open < close else { return nil }
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "), maxSplits: 5)
        guard fields.count >= 5, let state = fields[0].first,
              let parent = pid_t(String(decoding: fields[1], as: UTF8.self)),
              let group = pid_t(String(decoding: fields[2], as: UTF8.self)),
              let session = pid_t(String(decoding: fields[3], as: UTF8.self))
        else { return nil }
        return Entry(id: id, parent: parent, group: group, session: session, state: state,
                     command: String(decoding: bytes[(open + 1)..<close], as: UTF8.self))
    }

    /// The value of the environment variable `name` that process `id` started with (its
    /// `/proc/<id>/environ`), or `nil` when it had none or the file cannot be read (a zombie's is empty).
    public static func environmentValue(_ name: String, of id: pid_t) -> String? {
        guard let bytes = readSmallFile("/proc/\(id)/environ", limit: 1 << 20) else { return nil }
        let prefix = Array((name + "=").utf8)
        for entry in bytes.split(separator: 0) where entry.starts(with: prefix) {
            return String(decoding: entry.dropFirst(prefix.count), as: UTF8.self)
        }
        return nil
    }

    /// Whether process `id` holds an `flock` on the file `device`/`inode`, read from its open files: a
    /// `lock:` line in the `/proc/<id>/fdinfo` of a descriptor open on that file. `nil` when the process's
    /// descriptors cannot be read (another user's), `false` when it is gone.
    ///
    /// Not `/proc/locks`: that file is produced a page at a time, and a lock released meanwhile by anyone
    /// shifts the rest, so a busy machine's list can skip the very line asked for (the fresh-clone CI at
    /// 1b397b0, where a held lock read as none).
    public static func holdsFileLock(_ id: pid_t, device: dev_t, inode: ino_t) -> Bool? {
        guard let directory = opendir("/proc/\(id)/fd") else { return errno == ENOENT ? false : nil }
        defer { closedir(directory) }
        while let item = readdir(directory) {
            let name = withUnsafeBytes(of: item.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            var file = stat()
            guard Int32(name) != nil, stat("/proc/\(id)/fd/\(name)", &file) == 0,
                  file.st_dev == device, file.st_ino == inode,
                  let info = readSmallFile("/proc/\(id)/fdinfo/\(name)", limit: 1 << 16) else { continue }
            let held = info.split(separator: UInt8(ascii: "\n")).contains { line in
                line.starts(with: Array("lock:".utf8)) && String(decoding: line, as: UTF8.self).contains(" FLOCK ")
            }
            if held { return true }
        }
        return false
    }

    /// The first `limit` bytes of a `/proc` file, or `nil` when it cannot be opened.
    package static func readSmallFile(_ path: String, limit: Int = 4096) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < limit {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == -1 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return bytes
    }
}
