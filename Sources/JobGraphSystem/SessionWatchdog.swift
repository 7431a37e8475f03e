import Glibc
import JobGraphBasics

/// A small process beside jobgraph that stops its local tasks when jobgraph dies without stopping them
/// (SIGKILL, a crash), so that nothing a run started outlives it and runs again beside the next run.
///
/// Why not `PR_SET_PDEATHSIG` on each spawned child: it reaches only that child, not the rest of its
/// process group nor what left the group (`setsid`), and it fires when the spawning *thread* ends. A task's
/// processes are found instead by a mark in their environment, `variable` set to the session's token, which
/// every process a task starts inherits, inside its group or out of it. The watchdog is this process's
/// child, started with jobgraph's own executable and an empty environment (so an outer session's watchdog
/// leaves it alone); it waits on a pidfd of jobgraph, and once jobgraph has gone, sends every process with
/// the mark SIGTERM (and SIGCONT), then SIGKILL to what is left after `grace`, until none is left.
///
/// Not covered: a process that removed the mark from its environment before its exec (`env -i`), and one
/// whose environment cannot be read (another user's, a set-uid program's).
public final class SessionWatchdog: Sendable {
    /// The environment variable that marks a session's task processes with its token.
    public static let variable = "JOBGRAPH_SESSION"
    /// `argv[1]` of the watchdog process.
    static let argument = "--session-watchdog"
    /// How long marked processes have between SIGTERM and SIGKILL.
    static let grace: Duration = .milliseconds(500)

    /// The mark's value for this session's tasks.
    public let token: String
    /// The watchdog's pid; this process's child until `stop()` reaps it.
    public let id: pid_t

    private static let running = Locked<pid_t?>(nil)

    /// The pid of the watchdog this process started, if one runs: not a task's escaped process.
    static var runningID: pid_t? { running.withLock { $0 } }

    /// Starts the watchdog for this process.
    /// - Throws: `SystemError` from the spawn.
    public init() throws(SystemError) {
        token = String(UInt64.random(in: 1...UInt64.max), radix: 36)
        let configuration = SpawnConfiguration(executablePath: "/proc/self/exe",
                                               arguments: ["jobgraph", Self.argument, token, String(getpid())], environment: [])
        let child = try ProcessSpawner().spawn(configuration)
        child.closeDescriptors()
        id = child.id.rawValue
        Self.running.withLock { $0 = id }
    }

    /// Ends the watchdog, which has nothing to stop: the session stopped its tasks itself.
    public func stop() {
        Self.running.withLock { $0 = nil }
        // Still unreaped, so the pid is still the watchdog's.
        kill(id, SIGKILL)
        var status: CInt = 0
        while waitpid(id, &status, 0) == -1 && errno == EINTR {}
    }

    /// In the watchdog process (`argv[1]` is `argument`): waits for its parent to end, stops what carries
    /// the token, and exits. Elsewhere returns at once.
    public static func serveIfAsked(_ arguments: [String]) {
        guard arguments.count == 4, arguments[1] == argument, let parent = pid_t(arguments[3]) else { return }
        let token = arguments[2]
        // A Ctrl-C or hang-up meant for jobgraph is not for the watchdog, which stays until jobgraph has gone.
        for signal in [SIGINT, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE] { Glibc.signal(signal, SIG_IGN) }
        waitForExit(of: parent)
        stopMarked(token: token)
        exit(0)
    }

    private static func waitForExit(of parent: pid_t) {
        if let open = LinuxCalls.pidFDOpen {
            let descriptor = open(parent, 0)
            // Checked after the open: a parent gone before it is not the process the pidfd names.
            if descriptor >= 0, getppid() == parent {
                var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                while poll(&entry, 1, -1) == -1 && errno == EINTR {}
                return
            }
        }
        // No pidfd (kernels before 5.3): the parent has gone once this process is reparented.
        while getppid() == parent { pause(.milliseconds(20)) }
    }

    /// Signals every process that carries the mark until none is left: SIGTERM first, SIGKILL after `grace`.
    static func stopMarked(token: String) {
        let clock = ContinuousClock()
        let start = clock.now
        var killing = false
        var signalled: Set<pid_t> = []
        while true {
            let marked = markedProcesses(token: token)
            if marked.isEmpty { return }
            if !killing && clock.now - start >= grace { killing = true }
            for id in marked where killing || !signalled.contains(id) {
                send(killing ? SIGKILL : SIGTERM, to: id, token: token)
                signalled.insert(id)
            }
            pause(.milliseconds(10))
        }
    }

    /// The living processes, other than this one, whose environment carries the mark.
    private static func markedProcesses(token: String) -> [pid_t] {
        let me = getpid()
        return ProcessSnapshot().entries.values.filter {
            $0.id != me && !$0.isZombie && ProcessSnapshot.environmentValue(variable, of: $0.id) == token
        }.map(\.id)
    }

    /// Signals `id` through a pidfd, checked to still carry the mark once pinned, so a reused pid is never hit.
    private static func send(_ signal: CInt, to id: pid_t, token: String) {
        guard let open = LinuxCalls.pidFDOpen, let sendSignal = LinuxCalls.pidFDSendSignal else {
            kill(id, signal)  // before glibc 2.36: a reuse in the instant since the scan is the remaining risk
            if signal == SIGTERM { kill(id, SIGCONT) }
            return
        }
        let descriptor = open(id, 0)
        guard descriptor >= 0 else { return }  // gone already
        defer { close(descriptor) }
        guard ProcessSnapshot.environmentValue(variable, of: id) == token else { return }
        _ = sendSignal(descriptor, signal, nil, 0)
        if signal == SIGTERM { _ = sendSignal(descriptor, SIGCONT, nil, 0) }  // a stopped one acts on it
    }

    private static func pause(_ duration: Duration) {
        let parts = duration.components
        var request = timespec(tv_sec: Int(parts.seconds), tv_nsec: Int(parts.attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
    }
}
