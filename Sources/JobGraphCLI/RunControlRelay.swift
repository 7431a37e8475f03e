import Execution
import JobGraphBasics
import JobGraphSystem
#if canImport(Glibc)
import Glibc
#endif

/// Turns the signals the event loop reads into commands for the runner (contract: "Exit codes and signals").
///
/// Between runs (`run --watch` waiting for a change) no runner is attached: Ctrl-Z stops jobgraph as
/// usual, and the other signals go to the handler given to `whenIdle`.
final class RunControlRelay: Sendable {
    private let runner = Locked<Runner?>(nil)
    private let idleHandler = Locked<(@Sendable (ProcessSignal) -> Void)?>(nil)

    func attach(_ runner: Runner) { self.runner.withLock { $0 = runner } }

    /// Forgets the runner once its run has ended.
    func detach() { runner.withLock { $0 = nil } }

    /// Sets who hears the signals that arrive while no run is going on.
    func whenIdle(_ handler: @escaping @Sendable (ProcessSignal) -> Void) { idleHandler.withLock { $0 = handler } }

    /// Called on the event loop's thread.
    func deliver(_ signal: ProcessSignal) {
        guard let runner = runner.withLock({ $0 }) else {
            if signal == .terminalStop {
                raise(SIGSTOP)
            } else {
                idleHandler.withLock { $0 }?(signal)
            }
            return
        }
        switch signal {
        case .interrupt: runner.control(.interrupt)
        case .terminate: runner.control(.terminate)
        case .user1: runner.control(.suspend)
        case .user2: runner.control(.resume)
        case .terminalStop:
            // Ctrl-Z: stop the tasks' process groups, then this process, as a shell's job control would.
            runner.control(.pauseProcesses)
            raise(SIGSTOP)
        case .continue: runner.control(.continueProcesses)
        default: break
        }
    }
}
