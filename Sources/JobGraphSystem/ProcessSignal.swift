import Glibc

/// The signals jobgraph receives from its user or sends to its children.
///
/// SIGINT and SIGTERM cancel a run, SIGUSR1 and SIGUSR2 suspend and resume the queues, SIGTSTP and SIGCONT
/// are job control (CONTRACT.md, "Exit codes and signals"); the others are sent to process groups.
public enum ProcessSignal: Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// `SIGHUP`: the terminal went away.
    case hangup
    /// `SIGINT`: Ctrl-C; cancels the run.
    case interrupt
    /// `SIGQUIT`: Ctrl-\ from a terminal.
    case quit
    /// `SIGKILL`: ends a process unconditionally; cannot be blocked or handled.
    case kill
    /// `SIGUSR1`: suspends the queues.
    case user1
    /// `SIGUSR2`: resumes the queues.
    case user2
    /// `SIGPIPE`: written to a pipe nobody reads.
    case pipe
    /// `SIGALRM`: a timer expired.
    case alarm
    /// `SIGTERM`: asks a process to end; cancels the run, and is the first step of a `Teardown`.
    case terminate
    /// `SIGCHLD`: a child changed state.
    case child
    /// `SIGCONT`: continues a stopped process (even while blocked, the process continues).
    case `continue`
    /// `SIGSTOP`: stops a process unconditionally; cannot be blocked or handled.
    case stop
    /// `SIGTSTP`: Ctrl-Z; a blocked SIGTSTP does not stop jobgraph, which must stop its children and then itself.
    case terminalStop

    /// The C signal number (`SIGINT` …) on this platform.
    public var number: CInt {
        switch self {
        case .hangup: SIGHUP
        case .interrupt: SIGINT
        case .quit: SIGQUIT
        case .kill: SIGKILL
        case .user1: SIGUSR1
        case .user2: SIGUSR2
        case .pipe: SIGPIPE
        case .alarm: SIGALRM
        case .terminate: SIGTERM
        case .child: SIGCHLD
        case .continue: SIGCONT
        case .stop: SIGSTOP
        case .terminalStop: SIGTSTP
        }
    }

    /// The signal with C number `number`, or `nil` for one this enum does not name.
    public init?(number: CInt) {
        guard let match = Self.allCases.first(where: { $0.number == number }) else { return nil }
        self = match
    }

    /// The C name, such as `SIGTERM`.
    public var description: String {
        switch self {
        case .hangup: "SIGHUP"
        case .interrupt: "SIGINT"
        case .quit: "SIGQUIT"
        case .kill: "SIGKILL"
        case .user1: "SIGUSR1"
        case .user2: "SIGUSR2"
        case .pipe: "SIGPIPE"
        case .alarm: "SIGALRM"
        case .terminate: "SIGTERM"
        case .child: "SIGCHLD"
        case .continue: "SIGCONT"
        case .stop: "SIGSTOP"
        case .terminalStop: "SIGTSTP"
        }
    }
}

extension ProcessSignal {
    /// Makes this process ignore the signal (`SIG_IGN`); children still start with its default action,
    /// since the spawner resets every catchable signal.
    public func ignoreInThisProcess() {
        signal(number, SIG_IGN)
    }
}
