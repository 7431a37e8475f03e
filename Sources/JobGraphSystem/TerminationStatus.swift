/// How a child process ended (named as in swift-subprocess; Swift Testing already has an `ExitStatus`).
public enum TerminationStatus: Hashable, Sendable, CustomStringConvertible {
    /// It called `exit(code)`; `code` is 0–255.
    case exited(code: CInt)
    /// A signal ended it, with C number `signal`; `coreDumped` when it left a core file.
    case signalled(signal: CInt, coreDumped: Bool)

    /// Whether it exited with code 0.
    public var isSuccess: Bool { self == .exited(code: 0) }

    /// The status a POSIX shell reports in `$?`: the exit code, or 128 plus the signal number.
    public var shellStatus: CInt {
        switch self {
        case .exited(let code): code
        case .signalled(let signal, _): 128 + signal
        }
    }

    /// The signal that ended it, when it is one `ProcessSignal` names.
    public var signal: ProcessSignal? {
        if case .signalled(let number, _) = self { return ProcessSignal(number: number) }
        return nil
    }

    /// `exit code 3` or `killed by SIGTERM`.
    public var description: String {
        switch self {
        case .exited(let code):
            return "exit code \(code)"
        case .signalled(let number, let coreDumped):
            let name = ProcessSignal(number: number)?.description ?? "signal \(number)"
            return coreDumped ? "killed by \(name) (core dumped)" : "killed by \(name)"
        }
    }
}
