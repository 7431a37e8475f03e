import Glibc

/// Stops every process still descending from this one when a run ends: SIGTERM (and SIGCONT, so a stopped
/// one acts on it), up to a grace period to exit, then SIGKILL, and reaps them.
///
/// Tasks' process groups are killed as each task ends, so what is left here escaped its group (`setsid`,
/// a double fork, `daemon(3)`); with `OrphanReaper.becomeSubreaper()` such processes are reparented to this
/// process instead of init, and so are found. Each is pinned by a pidfd before it is signalled, so a pid
/// reused meanwhile is never hit. The task that started one is read from the `taskVariable` entry of its
/// environment (`/proc/<pid>/environ`), which `ProcessSpawner`'s callers set for each task.
public struct DescendantSweep: Sendable {
    /// The environment variable naming, in each task's processes, the task that started them.
    public static let taskVariable = "JOBGRAPH_TASK"

    /// How long the processes may take to exit after SIGTERM.
    public var grace: Duration
    /// How long to wait, after SIGKILL, for the last of them to be gone (one stuck in the kernel may not be).
    public var killPatience: Duration

    /// A sweep allowing `grace` after SIGTERM.
    public init(grace: Duration, killPatience: Duration = .seconds(5)) {
        self.grace = grace
        self.killPatience = killPatience
    }

    /// Signals, waits for and reaps every descendant; blocks the calling thread until they are gone (at
    /// most about `grace + killPatience`).
    /// - Returns: the processes that were running and had to be stopped, in the order they were found.
    public func run() -> [StoppedProcess] {
        // A run that started no process (a no-op rerun) reads no `/proc/<pid>/stat`: that read was 1.4% of a
        // no-op rerun of 10,000 tasks, at its very end (perf record, on a build machine of some hundred processes).
        if ProcessSnapshot.hasNoChildren() { return [] }
        var sweep = Progress()
        defer { sweep.closeDescriptors() }
        sweep.look(sending: .terminate)
        guard !sweep.tracked.isEmpty else { return [] }
        waitUntilGone(&sweep, for: grace, sending: .terminate)
        if !sweep.allExited {
            sweep.signalRunning(.kill)
            waitUntilGone(&sweep, for: killPatience, sending: .kill)
        }
        _ = sweep.look(sending: nil)   // the last orphans, reaped
        return sweep.stopped
    }

    /// Polls (1, 2, 4 … ms, at most 50 ms apart) until every tracked process has exited and no new one
    /// has appeared, or `limit` has passed; newcomers get `signal`.
    private func waitUntilGone(_ sweep: inout Progress, for limit: Duration, sending signal: ProcessSignal) {
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        var pause: Duration = .milliseconds(1)
        while true {
            let newcomers = sweep.look(sending: signal)
            if newcomers == 0 && sweep.allExited { return }
            if clock.now >= deadline { return }
            let seconds = pause.components
            var request = timespec(tv_sec: Int(seconds.seconds), tv_nsec: Int(seconds.attoseconds / 1_000_000_000))
            var remaining = timespec()
            while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
            pause = min(pause * 2, .milliseconds(50))
        }
    }

    /// The processes found so far. Calling thread only.
    private struct Progress {
        struct Tracked {
            var descriptor: FileDescriptor?
            var process: StoppedProcess
        }

        let me = getpid()
        let session = getsid(0)
        var tracked: [pid_t: Tracked] = [:]
        var stopped: [StoppedProcess] = []

        /// Reads `/proc` once: reaps this process's exited orphans (and the tracked processes that were its
        /// children) and sends `signal` to every new living descendant.
        /// - Returns: the number of new descendants.
        @discardableResult
        mutating func look(sending signal: ProcessSignal?) -> Int {
            let table = ProcessSnapshot()
            for entry in table.entries.values where entry.parent == me && entry.isZombie
                && (tracked[entry.id] != nil || !OrphanReaper.isSpawned(entry, session: session)) {
                var info = siginfo_t()
                while waitid(P_PID, id_t(entry.id), &info, WEXITED | WNOHANG) == -1 && errno == EINTR {}
            }
            guard let signal else { return 0 }
            var newcomers = 0
            let watchdog = SessionWatchdog.runningID
            for entry in table.descendants(of: me) where !entry.isZombie && tracked[entry.id] == nil && entry.id != watchdog {
                guard let descriptor = pin(entry) else { continue }
                let process = StoppedProcess(
                    id: ProcessID(rawValue: entry.id), command: entry.command,
                    task: ProcessSnapshot.environmentValue(DescendantSweep.taskVariable, of: entry.id))
                tracked[entry.id] = Tracked(descriptor: descriptor, process: process)
                stopped.append(process)
                newcomers += 1
                Self.send(signal, to: entry.id, pinnedBy: descriptor)
                if signal != .kill { Self.send(.continue, to: entry.id, pinnedBy: descriptor) }
            }
            return newcomers
        }

        /// Whether every tracked process has exited (a zombie counts as exited).
        var allExited: Bool {
            tracked.values.allSatisfy { tracked in
                guard let descriptor = tracked.descriptor else { return true }
                var entry = pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0)
                return poll(&entry, 1, 0) == 1
            }
        }

        /// Sends `signal` to every tracked process still running.
        func signalRunning(_ signal: ProcessSignal) {
            for (id, tracked) in tracked { if let descriptor = tracked.descriptor { Self.send(signal, to: id, pinnedBy: descriptor) } }
        }

        mutating func closeDescriptors() {
            for id in tracked.keys {
                tracked[id]?.descriptor?.closeIgnoringErrors()
                tracked[id]?.descriptor = nil
            }
        }

        /// A pidfd for `entry`, or `nil` when it is gone. A pid reused between the `/proc` read and the open
        /// would have to have the same parent (or this process, which inherits orphans meanwhile) to pass,
        /// which makes it a descendant all the same.
        private func pin(_ entry: ProcessSnapshot.Entry) -> FileDescriptor? {
            guard let open = LinuxCalls.pidFDOpen else { return nil }
            let descriptor = open(entry.id, 0)
            guard descriptor >= 0 else { return nil }
            guard let now = ProcessSnapshot.entry(of: entry.id), now.parent == entry.parent || now.parent == me,
                  !now.isZombie else {
                close(descriptor)
                return nil
            }
            return FileDescriptor(rawValue: descriptor)
        }

        /// Signals through the pidfd; before glibc 2.36, by pid, where a reuse in the instant since the pin
        /// is the remaining risk.
        private static func send(_ signal: ProcessSignal, to id: pid_t, pinnedBy descriptor: FileDescriptor) {
            // ESRCH: it has exited already, which is what we want.
            if let sendSignal = LinuxCalls.pidFDSendSignal {
                _ = sendSignal(descriptor.rawValue, signal.number, nil, 0)
            } else {
                _ = kill(id, signal.number)
            }
        }
    }
}

/// A process `DescendantSweep` found running when the run ended, and stopped.
public struct StoppedProcess: Hashable, Sendable {
    public var id: ProcessID
    /// The executable's name (`comm`).
    public var command: String
    /// The task whose environment it carries (`DescendantSweep.taskVariable`), if any.
    public var task: String?
}
