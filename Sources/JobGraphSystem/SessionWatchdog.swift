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
    private let report: String?
    /// The watchdog's pid once started; this process's child until `stop()` reaps it.
    private let child = Locked<Child>(.notStarted)

    private enum Child {
        case notStarted, running(pid_t), failed, stopped
    }

    private static let running = Locked<pid_t?>(nil)

    /// The pid of the watchdog this process started, if one runs: not a task's escaped process.
    static var runningID: pid_t? { running.withLock { $0 } }

    /// A watchdog for this process, started by `start()`.
    /// - Parameter report: where the watchdog writes what it stopped (`report(at:)` reads it), if it has to.
    public init(report: String?) {
        token = String(UInt64.random(in: 1...UInt64.max), radix: 36)
        self.report = report
    }

    /// Starts the watchdog process, once, before the session's first local task: a run that finds every
    /// task up to date starts nothing that could outlive it, and spares the process (about 10 ms of CPU
    /// in the debug build, perf stat of a one-task `jobgraph run`).
    /// - Returns: the spawn's error the first time it fails; `nil` when the watchdog runs or was tried before.
    public func start() -> SystemError? {
        child.withLock { child -> SystemError? in
            guard case .notStarted = child else { return nil }
            let configuration = SpawnConfiguration(
                executablePath: "/proc/self/exe",
                arguments: ["jobgraph", Self.argument, token, String(getpid())] + (report.map { [$0] } ?? []),
                environment: [])
            do throws(SystemError) {
                let spawned = try ProcessSpawner().spawn(configuration)
                spawned.closeDescriptors()
                child = .running(spawned.id.rawValue)
                Self.running.withLock { $0 = spawned.id.rawValue }
                return nil
            } catch {
                child = .failed
                return error
            }
        }
    }

    /// Ends the watchdog, which has nothing to stop: the session stopped its tasks itself.
    public func stop() {
        let id = child.withLock { child -> pid_t? in
            defer { child = .stopped }
            if case .running(let id) = child { return id }
            return nil
        }
        guard let id else { return }
        Self.running.withLock { $0 = nil }
        // Still unreaped, so the pid is still the watchdog's.
        kill(id, SIGKILL)
        var status: CInt = 0
        while waitpid(id, &status, 0) == -1 && errno == EINTR {}
    }

    /// In the watchdog process (`argv[1]` is `argument`): waits for its parent to end, stops what carries
    /// the token, and exits. Elsewhere returns at once.
    public static func serveIfAsked(_ arguments: [String]) {
        guard arguments.count == 4 || arguments.count == 5, arguments[1] == argument, let parent = pid_t(arguments[3]) else { return }
        let token = arguments[2]
        // A Ctrl-C or hang-up meant for jobgraph is not for the watchdog, which stays until jobgraph has gone.
        for signal in [SIGINT, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE] { Glibc.signal(signal, SIG_IGN) }
        waitForExit(of: parent)
        let stopped = stopMarked(token: token)
        if arguments.count == 5 { write(Report(run: parent, stopped: stopped), to: arguments[4]) }
        exit(0)
    }

    /// What a watchdog did after its jobgraph died.
    public struct Report: Equatable, Sendable {
        /// The dead jobgraph's pid.
        public var run: pid_t
        /// The processes it stopped, in the order it found them.
        public var stopped: [StoppedProcess]

        /// One line for the user: `the previous run (pid 12) died without ending; its watchdog stopped 2 processes: sleep (task `family`), …`
        public var text: String {
            let names = stopped.map { process in process.command + (process.task.map { " (task `\($0)`)" } ?? "") }
            return "the previous run (pid \(run)) died without ending; its watchdog stopped "
                + (names.isEmpty ? "no process" : "\(names.count) process\(names.count == 1 ? "" : "es"): " + names.joined(separator: ", "))
        }
    }

    /// Reads and removes the report a watchdog left at `path`.
    /// - Returns: the report, or `nil` when there is none (the last run ended as usual).
    public static func takeReport(at path: String) -> Report? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 20 {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 { bytes += buffer[..<count] } else if count == 0 || errno != EINTR { break }
        }
        unlink(path)
        // Line 1: the run's pid; then `PID TASK-OR-- COMMAND` per process.
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        guard let first = lines.first, let run = pid_t(first) else { return nil }
        let stopped = lines.dropFirst().compactMap { line -> StoppedProcess? in
            let fields = line.split(separator: " ", maxSplits: 2)
            guard fields.count == 3, let id = pid_t(fields[0]) else { return nil }
            return StoppedProcess(id: ProcessID(rawValue: id), command: String(fields[2]), task: fields[1] == "-" ? nil : String(fields[1]))
        }
        return Report(run: run, stopped: stopped)
    }

    /// Writes `report` for `takeReport(at:)`, whole or not at all (a temporary file renamed).
    private static func write(_ report: Report, to path: String) {
        var text = "\(report.run)\n"
        for process in report.stopped {
            // A task id holds no space or newline (PipelineModel's identifiers); a command name may.
            let command = String(process.command.map { $0 == "\n" ? " " : $0 })
            text += "\(process.id.rawValue) \(process.task ?? "-") \(command)\n"
        }
        let temporary = path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return }  // nowhere to say it: the processes are stopped all the same
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        if written == bytes.count { rename(temporary, path) } else { unlink(temporary) }
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
    /// - Returns: the processes found, in the order they were.
    public static func stopMarked(token: String) -> [StoppedProcess] {
        let clock = ContinuousClock()
        let start = clock.now
        var killing = false
        var stopped: [pid_t: StoppedProcess] = [:]
        var order: [pid_t] = []
        while true {
            let marked = markedProcesses(token: token)
            if marked.isEmpty { return order.compactMap { stopped[$0] } }
            if !killing && clock.now - start >= grace { killing = true }
            for entry in marked where killing || stopped[entry.id] == nil {
                // Named before it is signalled: a process that has exited has no environment left to read.
                if stopped[entry.id] == nil {
                    order.append(entry.id)
                    stopped[entry.id] = StoppedProcess(id: ProcessID(rawValue: entry.id), command: entry.command,
                                                       task: ProcessSnapshot.environmentValue(DescendantSweep.taskVariable, of: entry.id))
                }
                send(killing ? SIGKILL : SIGTERM, to: entry.id, token: token)
            }
            pause(.milliseconds(10))
        }
    }

    /// The living processes, other than this one, whose environment carries the mark.
    private static func markedProcesses(token: String) -> [ProcessSnapshot.Entry] {
        let me = getpid()
        return ProcessSnapshot().entries.values.filter {
            $0.id != me && !$0.isZombie && ProcessSnapshot.environmentValue(variable, of: $0.id) == token
        }.sorted { $0.id < $1.id }
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
