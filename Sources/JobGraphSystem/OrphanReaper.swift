import Glibc

/// Makes this process a child subreaper and reaps the orphans that then become its children.
///
/// A task that escapes its process group (`setsid`, a double fork, `nohup` after `setsid`, `daemon(3)`)
/// leaves processes a group kill cannot reach. As a subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`), this process
/// rather than init inherits them when their parent ends, so `DescendantSweep` can find and stop them, and
/// they must be reaped here once they exit.
///
/// Reaping must leave alone the children `ProcessSpawner` started, which an `EventLoop` reaps through their
/// pidfds (a `waitpid` here would make it lose them). Those are told apart by what the spawner guarantees:
/// each leads its own process group in this process's session, and a group leader cannot call `setsid`. An
/// orphan either left the session (`setsid`, `daemon(3)`) or sits in a group it does not lead (a double
/// fork). The one orphan mistaken for a spawned child is one that made itself a group leader with
/// `setpgid(0, 0)`; it is left unreaped until `DescendantSweep` ends the run.
public enum OrphanReaper {
    /// Makes this process the subreaper of its descendants. Not inherited by children; call it once, from
    /// the process that spawns the tasks.
    /// - Throws: `SystemError` from `prctl`.
    public static func becomeSubreaper() throws(SystemError) {
        let prctl = try LinuxCalls.require(LinuxCalls.prctl, "prctl")
        _ = try sys("prctl") { prctl(LinuxCalls.setChildSubreaper, 1, 0, 0, 0) }
    }

    /// Whether this process is a subreaper (`PR_GET_CHILD_SUBREAPER`).
    public static var isSubreaper: Bool {
        guard let prctl = LinuxCalls.prctl else { return false }
        var flag: CInt = 0
        let result = withUnsafeMutablePointer(to: &flag) { prctl(LinuxCalls.getChildSubreaper, UInt(bitPattern: $0), 0, 0, 0) }
        return result == 0 && flag != 0
    }

    /// Whether `entry`, a child of this process, is one `ProcessSpawner` started (see the type's documentation).
    static func isSpawned(_ entry: ProcessSnapshot.Entry, session: pid_t = getsid(0)) -> Bool {
        entry.group == entry.id && entry.session == session
    }

    /// Reaps exited orphans that `waitid` offers first, without a look at `/proc` for each process.
    ///
    /// `waitid(P_ALL, WNOWAIT)` names one exited child without reaping it; an orphan is reaped and the next
    /// one asked for. A spawned child is left for its pidfd's reaper, and it hides any exited orphan behind
    /// it, so the answer says whether `reapByScan()` is needed to be sure. Safe from any thread.
    /// - Returns: how many were reaped, and whether an exited spawned child hid the rest.
    @discardableResult
    public static func reapFirstExited() -> (reaped: Int, isBlocked: Bool) {
        let session = getsid(0)
        var reaped = 0
        while true {
            var info = siginfo_t()
            // ECHILD: no children at all; anything else (EINTR) ends this pass too, the next one retries.
            guard waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0 else { return (reaped, false) }
            let id = info._sifields._sigchld.si_pid
            guard id != 0 else { return (reaped, false) }
            guard let entry = ProcessSnapshot.entry(of: id), !isSpawned(entry, session: session) else { return (reaped, true) }
            if reap(id) { reaped += 1 } else { return (reaped, false) }
        }
    }

    /// Reaps every exited orphan, finding them in `/proc`; safe from any thread.
    /// - Returns: how many were reaped.
    @discardableResult
    public static func reapByScan() -> Int {
        let session = getsid(0)
        let me = getpid()
        var reaped = 0
        for entry in ProcessSnapshot().entries.values where entry.parent == me && entry.isZombie && !isSpawned(entry, session: session) {
            if reap(entry.id) { reaped += 1 }
        }
        return reaped
    }

    /// Reaps every exited member of process group `group`, whose leader (a spawned child) was reaped already;
    /// what is left of the group after its leader are orphans of this process. Safe from any thread.
    static func reapExited(inGroup group: ProcessID) {
        while true {
            var info = siginfo_t()
            guard waitid(P_PGID, id_t(group.rawValue), &info, WEXITED | WNOHANG | WNOWAIT) == 0 else { return }
            let id = info._sifields._sigchld.si_pid
            guard id != 0, id != group.rawValue, reap(id) else { return }
        }
    }

    /// Reaps `id` if it has exited.
    private static func reap(_ id: pid_t) -> Bool {
        var info = siginfo_t()
        while true {
            if waitid(P_PID, id_t(id), &info, WEXITED | WNOHANG) == 0 { return info._sifields._sigchld.si_pid != 0 }
            if errno != EINTR { return false }
        }
    }
}
