import Execution
import JobGraphBasics
import JobGraphSystem
#if canImport(Glibc)
import Glibc
#endif

/// Turns the signals the event loop reads into commands for the runner (contract: "Exit codes and signals").
///
/// Between runs (`run --watch` waiting for a change, or before the first run starts) no runner is
/// attached: Ctrl-Z stops jobgraph as usual, and the other signals go to the handler given to
/// `whenIdle`. A SIGINT or SIGTERM received then is also kept for `takePendingStop()`, so `--watch`
/// starts no run after Ctrl-C even when the signal came while it was getting a run ready.
public final class RunControlRelay: Sendable {
    private let runner = Locked<(current: Runner?, pendingStop: RunStop?)>((nil, nil))
    private let idleHandler = Locked<(@Sendable (ProcessSignal) -> Void)?>(nil)

    func attach(_ runner: Runner) { self.runner.withLock { $0.current = runner } }

    /// The SIGINT or SIGTERM received while no runner was attached (kept once: taking it forgets it), or
    /// else one still pending that the event loop has not read (it came while a `vars: {sh:}` command ran,
    /// say), which stays pending for the loop.
    public func takePendingStop() -> RunStop? {
        runner.withLock { state in
            defer { state.pendingStop = nil }
            return state.pendingStop
        } ?? Self.stopStillPending()
    }

    /// A SIGINT (first) or SIGTERM pending for this process, which blocks both until an event loop reads
    /// them: for a caller with no session yet, whose loop would have taken it.
    public static func stopStillPending() -> RunStop? {
        let pending = SignalSet([.interrupt, .terminate]).pending().signals
        return [ProcessSignal.interrupt, .terminate].first(where: pending.contains).flatMap(stop(for:))
    }

    private static func stop(for signal: ProcessSignal) -> RunStop? {
        switch signal {
        case .interrupt: .interrupt
        case .terminate: .terminate
        default: nil
        }
    }

    /// Forgets the runner once its run has ended.
    func detach() { runner.withLock { $0.current = nil } }

    /// Sets who hears the signals that arrive while no run is going on.
    func whenIdle(_ handler: @escaping @Sendable (ProcessSignal) -> Void) { idleHandler.withLock { $0 = handler } }

    /// Called on the event loop's thread.
    func deliver(_ signal: ProcessSignal) {
        let runner = self.runner.withLock { state -> Runner? in
            if state.current == nil, state.pendingStop == nil {
                state.pendingStop = Self.stop(for: signal)
            }
            return state.current
        }
        guard let runner else {
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
