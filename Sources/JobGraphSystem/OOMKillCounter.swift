import JobGraphBasics

/// The kernel's count of processes its OOM killer ended, by which a SIGKILL that jobgraph did not send is
/// told to be an out-of-memory kill (docs/pipeline.md, "Retries").
///
/// Which count: the `oom_kill` line of the memory cgroup v2 `memory.events` of jobgraph's own cgroup,
/// which counts the kills in every cgroup below it too; else the machine's, `/proc/vmstat`'s `oom_kill`
/// (Linux 4.13 on). Not cgroup v1's `memory.oom_control`: it counts only its own cgroup's kills, not those
/// of a cgroup below it (measured on this project's machine: a kill in a child cgroup left the parent's
/// count at 0 while `/proc/vmstat`'s rose).
///
/// Each kill counted is claimed by at most one task's death (`claimKill`), so two deaths cannot both be
/// put down to one kill. Safe from any thread.
public final class OOMKillCounter: Sendable {
    /// The file read, and the key of its line.
    public let path: String
    private let key: String
    /// The count up to which kills are claimed already (at first, the count when the counter was made).
    private let claimed: Locked<Int>

    /// A counter over `path`'s line `key N`; `nil` when the file cannot be read or has no such line.
    public init?(path: String, key: String = "oom_kill") {
        self.path = path
        self.key = key
        claimed = Locked(0)
        guard let count = read() else { return nil }
        claimed.withLock { $0 = count }
    }

    /// The counter of jobgraph's own cgroup where cgroup v2 has one, else the machine's; `nil` where
    /// neither can be read (then no local failure is ever `oom`).
    public static func located() -> OOMKillCounter? {
        located(cgroupFile: text(of: "/proc/self/cgroup"))
    }

    /// The same, given `/proc/self/cgroup`'s text.
    public static func located(cgroupFile: String?) -> OOMKillCounter? {
        // The v2 line is `0::/PATH`.
        if let line = cgroupFile?.split(separator: "\n").first(where: { $0.hasPrefix("0::") }),
           let counter = OOMKillCounter(path: "/sys/fs/cgroup" + String(line.dropFirst(3)) + "/memory.events") {
            return counter
        }
        return OOMKillCounter(path: "/proc/vmstat")
    }

    /// Whether the kernel has killed a process for memory since the last kill claimed, claiming it if so.
    /// Reads the file: call it only for a process that SIGKILL ended.
    public func claimKill() -> Bool {
        guard let count = read() else { return false }
        return claimed.withLock { claimed in
            guard count > claimed else { return false }
            claimed += 1
            return true
        }
    }

    private func read() -> Int? {
        guard let text = Self.text(of: path) else { return nil }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, fields[0] == key { return Int(fields[1]) }
        }
        return nil
    }

    /// A small kernel file's text (`/proc/vmstat` is about 5 KB).
    private static func text(of path: String) -> String? {
        ProcessSnapshot.readSmallFile(path, limit: 65_536).map { String(decoding: $0, as: UTF8.self) }
    }
}
