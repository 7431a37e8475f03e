import Glibc

/// A set of signals to block and then read through an `EventLoop` instead of a C signal handler.
///
/// **Block before any other thread starts.** A process-directed signal goes to any one thread that does not
/// block it. Threads inherit their creator's mask, so `blockInCallingThread()` must run first thing in
/// `main`, before Dispatch, the Swift concurrency pool, an `OperationQueue` or an `EventLoop` has created a
/// thread; otherwise an older thread may receive SIGINT and the default action ends the process before the
/// loop reads it. Children do not inherit the mask: `ProcessSpawner` resets it in each child.
public struct SignalSet: Hashable, Sendable, ExpressibleByArrayLiteral {
    /// The signals in the set.
    public var signals: Set<ProcessSignal>

    /// A set holding `signals`.
    public init(_ signals: some Sequence<ProcessSignal>) { self.signals = Set(signals) }

    /// A set holding the listed signals.
    public init(arrayLiteral elements: ProcessSignal...) { self.init(elements) }

    /// The signals a run reacts to (CONTRACT.md): cancel, suspend and resume the queues, job control.
    ///
    /// SIGCHLD is not included: exits arrive through pidfds, so SIGCHLD keeps its default action, which
    /// discards the signal but (unlike `SIG_IGN`) leaves exited children for us to reap.
    public static let runControl: SignalSet = [.interrupt, .terminate, .user1, .user2, .terminalStop, .continue]

    /// SIGCHLD, for a process that learns of its children's exits through pidfds: blocked in every thread,
    /// it stays pending and wakes nobody. Unblocked, each child's exit woke whichever thread slept without
    /// it blocked, to discard it: the main thread, once per task (9,000 wake-ups in a 10,000-task run,
    /// `perf` showing it in `get_signal`). Still discarded at its default action, and children start with
    /// an empty mask (`ProcessSpawner`).
    public static let childExits: SignalSet = [.child]

    /// Adds the set to the calling thread's blocked signals (`pthread_sigmask(SIG_BLOCK)`).
    ///
    /// Call it from `main` before any thread exists (see the type's documentation).
    /// - Throws: `SystemError` from `pthread_sigmask`.
    public func blockInCallingThread() throws(SystemError) {
        var mask = cSet
        try sysReturningError("pthread_sigmask") { pthread_sigmask(SIG_BLOCK, &mask, nil) }
    }

    /// A signalfd that becomes readable while one of the set is pending (`O_CLOEXEC | O_NONBLOCK`): read to
    /// take the signal, or only polled to leave it pending for its reader.
    /// - Throws: `SystemError` where signalfd is missing or fails.
    func descriptor() throws(SystemError) -> FileDescriptor {
        let makeSignalFD = try LinuxCalls.require(LinuxCalls.signalFD, "signalfd")
        var mask = cSet
        return FileDescriptor(rawValue: try sys("signalfd") { makeSignalFD(-1, &mask, O_CLOEXEC | O_NONBLOCK) })
    }

    /// The signals of the set pending for this process or the calling thread, which block them until a
    /// reader takes them (`sigpending`); empty where that cannot be asked.
    public func pending() -> SignalSet {
        var pending = sigset_t()
        guard sigpending(&pending) == 0 else { return [] }
        return SignalSet(signals.filter { sigismember(&pending, $0.number) == 1 })
    }

    /// The set as a C `sigset_t`.
    var cSet: sigset_t {
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in signals { sigaddset(&mask, signal.number) }
        return mask
    }
}
