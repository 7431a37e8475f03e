import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under the system's temporary directory for tests that run real processes.
public struct ScratchDirectory: Sendable {
    /// Absolute, with symbolic links resolved, so it compares equal to what `pwd -P` prints.
    public let path: String

    /// Creates the directory; the name starts with `prefix`.
    public init(_ prefix: String = "jobgraph-test") throws {
        var template = Array((NSTemporaryDirectory() + "/\(prefix)-XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: String(cString: strerror(errno))])
        }
        path = URL(fileURLWithPath: String(cString: created)).resolvingSymlinksInPath().path
    }

    /// An existing folder, such as a subfolder of another scratch directory, which keeps owning it.
    public init(existing path: String) {
        self.path = path
    }

    /// The absolute path of `name` inside the directory.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Writes `text` to `name` inside the directory.
    public func write(_ text: String, to name: String) throws {
        try text.write(toFile: file(name), atomically: false, encoding: .utf8)
    }

    /// Writes each text to its path inside the directory, making the folders on the way.
    public func write(files: [String: String]) throws {
        for (name, text) in files {
            let folder = (file(name) as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try write(text, to: name)
        }
    }

    /// The text of `name`, or `nil` when it cannot be read.
    public func read(_ name: String) -> String? {
        try? String(contentsOfFile: file(name), encoding: .utf8)  // a missing file is an answer, not an error
    }

    /// Whether `name` exists inside the directory.
    public func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: file(name)) }

    /// Removes the directory and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(atPath: path)  // best effort: a leftover temp dir harms nothing
    }
}

/// What `/proc` says about the processes on this machine, for proving that none outlived a run.
///
/// Zombies are left out: on a machine whose init does not reap orphans (this CI's VM), an orphaned
/// grandchild stays a zombie forever, though it ran no code after its death.
public enum ProcessTable {
    /// The living (not zombie) processes whose process group is `group`.
    public static func living(inGroup group: pid_t) -> [pid_t] {
        entries().filter { $0.group == group && $0.state != "Z" && $0.state != "X" }.map(\.pid)
    }

    /// The living processes with `argument` among their command-line arguments (a zombie has none).
    public static func living(withArgument argument: String) -> [pid_t] {
        livingEntries(withArgument: argument).map(\.pid)
    }

    /// The living processes running a command with `argument` among its arguments, one per command: a child
    /// whose parent has the argument too is left out. dash starts a command with vfork, and until its exec the
    /// child shows its shell's arguments; under load a look at `/proc` found one such child beside its shell.
    public static func commands(withArgument argument: String) -> [pid_t] {
        let entries = livingEntries(withArgument: argument)
        let pids = Set(entries.map(\.pid))
        return entries.filter { !pids.contains($0.parent) }.map(\.pid)
    }

    private static func livingEntries(withArgument argument: String) -> [Entry] {
        entries().filter { entry in
            guard entry.state != "Z", entry.state != "X",
                  let data = FileManager.default.contents(atPath: "/proc/\(entry.pid)/cmdline") else { return false }
            return data.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == argument }
        }
    }

    /// The state letter (`T` when stopped, `Z` a zombie) of each process in group `group`.
    public static func states(inGroup group: pid_t) -> [pid_t: Character] {
        Dictionary(entries().filter { $0.group == group }.map { ($0.pid, $0.state) }, uniquingKeysWith: { $1 })
    }

    /// Whether every process of group `group` is stopped, and at least one is. Two more states count as
    /// stopped: a `sleep` that had just exited when the stop came stays a zombie (Z), its stopped shell cannot
    /// reap it; and dash starts a command with vfork, so a shell whose child was stopped before its exec
    /// waits for it uninterruptibly (D). Neither runs anything.
    public static func isStopped(group: pid_t) -> Bool {
        let members = states(inGroup: group).values
        return members.contains("T") && members.allSatisfy { "TZD".contains($0) }
    }

    /// The state letter of process `pid`, or `nil` once it is gone.
    public static func state(of pid: pid_t) -> Character? {
        entries().first { $0.pid == pid }?.state
    }

    /// Whether process `pid` waits for a `flock` of the file at `path`, held by another: it has a blocked
    /// request (`->`) on that file's inode in `/proc/locks`.
    public static func waitsForLock(_ pid: pid_t, on path: String) -> Bool {
        var file = stat()
        // Read to its end (`String(contentsOfFile:)` stops after a page of a /proc file); a line skipped because
        // the list moved while it was read is found when the caller asks again.
        guard stat(path, &file) == 0, let data = try? FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/locks")).readToEnd()
        else { return false }
        let locks = String(decoding: data, as: UTF8.self)
        // `6: -> FLOCK  ADVISORY  WRITE 20327 fe:00:16222947 0 EOF`
        return locks.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 6 && fields[1] == "->" && fields[2] == "FLOCK" && fields[5] == "\(pid)"
                && fields[6].split(separator: ":").last == "\(file.st_ino)"
        }
    }

    /// The niceness of the calling process, which children inherit unless told otherwise.
    public static var ownNiceness: Int32 {
        errno = 0
        return getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    }

    private struct Entry {
        var pid: pid_t
        var state: Character
        var parent: pid_t
        var group: pid_t
    }

    private static func entries() -> [Entry] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return names.compactMap { name -> Entry? in
            guard let pid = pid_t(name),
                  let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                  let afterName = stat.range(of: ") ", options: .backwards)
            else { return nil }  // a process that ended while we looked is simply not there
            // After the name: state, ppid, pgrp, …
            let fields = stat[afterName.upperBound...].split(separator: " ")
            guard fields.count > 2, let state = fields[0].first, let parent = pid_t(fields[1]), let group = pid_t(fields[2]) else { return nil }
            return Entry(pid: pid, state: state, parent: parent, group: group)
        }
    }
}

/// Checks `condition` every `pause` (10 ms) until it holds or `limit` passes: for effects with no event
/// to await, such as the kernel finishing a process's exit, or another program's answer. `limit` is a hang
/// guard, never the expected wait (by default 20 s, times `TestBuild.hangGuardFactor`).
/// - Returns: whether the condition held in time.
public func eventually(within limit: Duration = .seconds(20 * TestBuild.hangGuardFactor), every pause: Duration = .milliseconds(10),
                       _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + limit
    while true {
        if try await condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        do {
            try await Task.sleep(for: pause)
        } catch {
            return try await condition()  // cancelled: one last look
        }
    }
}
