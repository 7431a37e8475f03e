import JobGraphBasics
import Glibc
import Synchronization

/// One thread that watches every child's output and exit, timers, work posted from other threads and
/// signals, all through one epoll instance.
///
/// Per child the loop holds two descriptors (the output pipe and a pidfd), so thousands of children cost
/// no thread each; each event is an O(1) table lookup, and a line costs one allocation: its own bytes.
///
/// Callbacks (`ChildEventHandler`, timer actions, posted work, the signal callback) all run on the loop
/// thread, one at a time, and must be quick and must not block; they may call any method of the loop.
/// Every public method is safe from any thread.
///
/// Call `stop()` when done: the thread keeps the loop alive until then.
///
/// `@unchecked Sendable`: the mutable state in the stored properties marked "loop thread" is only touched
/// on the loop thread (`isCurrentThread`); what other threads reach is behind `inbox`, `timers` and
/// `threadState` (each `Locked`) or is the atomic `loopThread`; descriptors and C functions are immutable
/// after `init` and closed only in `deinit`, when no thread can reach the loop.
public final class EventLoop: @unchecked Sendable {
    /// The longest line delivered in one piece, in bytes; a longer one arrives in pieces of this size, so a
    /// child printing without newlines cannot exhaust memory.
    public static let maximumLineLength = 1 << 20

    static let readBufferSize = 1 << 16
    static let eventCapacity = 64

    // epoll `data`: kind in the top byte, a 24-bit slot generation, then the 32-bit slot number. The
    // generation makes an event still queued for a finished child harmless once its slot is reused.
    enum EventKind: UInt64 {
        case wakeup = 1, signal, output, exit
    }

    // Immutable after init.
    let epoll: FileDescriptor
    let wakeup: FileDescriptor
    let signalDescriptor: FileDescriptor?
    let signals: SignalSet
    let onSignal: (@Sendable (ProcessSignal) -> Void)?
    let epollControl: LinuxCalls.EpollControl
    let epollWait: LinuxCalls.EpollWait
    let readBuffer: UnsafeMutableRawPointer
    let eventBuffer: UnsafeMutableRawPointer

    // Shared with other threads.
    let inbox = Locked(Inbox())
    let timers = Locked(TimerTable())
    let threadState = Locked(ThreadState())
    let loopThread = Atomic<UInt>(0)

    // Loop thread only.
    var isRunning = true
    var children: [WatchedChild?] = []
    var freeSlots: [Int] = []
    var nextGeneration: UInt32 = 0
    var teardowns: [pid_t: TeardownProgress] = [:]
    var stopReason: SystemError?

    struct Inbox {
        var work: [@Sendable () -> Void] = []
        var isClosed = false
    }

    struct ThreadState {
        /// The joinable thread, until `stop()` takes it to join or the finished loop detaches it.
        var handle: pthread_t?
    }

    /// Creates the loop and starts its thread.
    ///
    /// - Parameters:
    ///   - signals: signals to receive through `onSignal`. The loop blocks them on its own thread; the rest of
    ///     the process must block them too, from `main` before any thread starts (see `SignalSet`).
    ///   - onSignal: called on the loop thread for each signal received.
    /// - Throws: `SystemError` when epoll, eventfd, signalfd or the thread cannot be created.
    public init(signals: SignalSet = [], onSignal: (@Sendable (ProcessSignal) -> Void)? = nil) throws(SystemError) {
        let create = try LinuxCalls.require(LinuxCalls.epollCreate1, "epoll_create1")
        let control = try LinuxCalls.require(LinuxCalls.epollControl, "epoll_ctl")
        let wait = try LinuxCalls.require(LinuxCalls.epollWait, "epoll_wait")
        let makeEventFD = try LinuxCalls.require(LinuxCalls.eventFD, "eventfd")

        var opened: [FileDescriptor] = []
        do throws(SystemError) {
            let epoll = FileDescriptor(rawValue: try sys("epoll_create1") { create(O_CLOEXEC) })
            opened.append(epoll)
            let wakeup = FileDescriptor(rawValue: try sys("eventfd") { makeEventFD(0, O_CLOEXEC | O_NONBLOCK) })
            opened.append(wakeup)
            var signalDescriptor: FileDescriptor? = nil
            if !signals.signals.isEmpty {
                let descriptor = try signals.descriptor()
                opened.append(descriptor)
                signalDescriptor = descriptor
            }
            try Self.add(wakeup, data: Self.eventData(.wakeup), to: epoll, using: control)
            if let signalDescriptor {
                try Self.add(signalDescriptor, data: Self.eventData(.signal), to: epoll, using: control)
            }
            self.epoll = epoll
            self.wakeup = wakeup
            self.signalDescriptor = signalDescriptor
        } catch {
            for descriptor in opened { descriptor.closeIgnoringErrors() }
            throw error
        }
        self.signals = signals
        self.onSignal = onSignal
        self.epollControl = control
        self.epollWait = wait
        readBuffer = .allocate(byteCount: Self.readBufferSize, alignment: 16)
        eventBuffer = .allocate(byteCount: Self.eventCapacity * LinuxCalls.epollEventSize, alignment: 16)

        // The thread holds a strong reference until `run()` returns; a failed start leaves none, so `deinit`
        // closes the descriptors.
        let handle = try JoinableThread.startThrowingSystemError { self.run() }
        threadState.withLock { $0.handle = handle }
    }

    deinit {
        epoll.closeIgnoringErrors()
        wakeup.closeIgnoringErrors()
        signalDescriptor?.closeIgnoringErrors()
        readBuffer.deallocate()
        eventBuffer.deallocate()
    }

    /// Whether the caller is running on the loop thread (inside one of its callbacks).
    public var isCurrentThread: Bool {
        let loop = loopThread.load(ordering: .acquiring)
        return loop != 0 && pthread_equal(pthread_self(), loop) != 0
    }

    /// Runs `work` on the loop thread, after the events being handled now; safe from any thread.
    ///
    /// - Returns: `false` when the loop has stopped and `work` will never run.
    @discardableResult
    public func post(_ work: @escaping @Sendable () -> Void) -> Bool {
        let (accepted, needsWakeup) = inbox.withLock { inbox -> (Bool, Bool) in
            if inbox.isClosed { return (false, false) }
            let wasEmpty = inbox.work.isEmpty
            inbox.work.append(work)
            return (true, wasEmpty)
        }
        // A non-empty inbox already has a wake-up on its way (the first post wrote one), so one write per
        // batch of posts suffices.
        if needsWakeup { wake() }
        return accepted
    }

    /// Ends the loop; from another thread, also waits until its thread has finished.
    ///
    /// Children still watched then get their group killed (SIGKILL), are reaped, and their handlers get
    /// `failed` with `ECANCELED`; pending teardowns call their completions; pending timers never fire. From
    /// the loop thread it returns at once and the loop ends after the current callback. If several threads
    /// call it at once, only one of them waits.
    public func stop() {
        if isCurrentThread {
            isRunning = false
            return
        }
        let handle = threadState.withLock { state -> pthread_t? in
            defer { state.handle = nil }
            return state.handle
        }
        post { [self] in isRunning = false }
        if let handle { pthread_join(handle, nil) }
    }

    func wake() {
        var one: UInt64 = 1
        // Fails only when the 64-bit counter would overflow (EAGAIN), in which case a wake-up is pending anyway.
        _ = write(wakeup.rawValue, &one, MemoryLayout<UInt64>.size)
    }

    // MARK: The loop thread

    private func run() {
        loopThread.store(pthread_self(), ordering: .releasing)
        var mask = signals.cSet
        // Belt and braces for a process that did not block them in `main`; EINVAL is impossible here.
        _ = pthread_sigmask(SIG_BLOCK, &mask, nil)

        while isRunning { turn() }
        finish()
    }

    /// One `epoll_wait` and everything it reported, then the due timers.
    private func turn() {
        let timeout = millisecondsUntilNextTimer()
        let count = epollWait(epoll.rawValue, eventBuffer, CInt(Self.eventCapacity), timeout)
        if count == -1 {
            if errno == EINTR { return }
            // Only EBADF, EFAULT or EINVAL, none of which a retry would mend.
            stopReason = SystemError("epoll_wait", errno: .current)
            isRunning = false
            return
        }
        for index in 0..<Int(count) where isRunning {
            let data = eventBuffer.loadUnaligned(
                fromByteOffset: index * LinuxCalls.epollEventSize + LinuxCalls.epollDataOffset, as: UInt64.self)
            dispatch(data)
        }
        if isRunning { fireDueTimers() }
    }

    private func dispatch(_ data: UInt64) {
        let slot = Int(truncatingIfNeeded: data & 0xFFFF_FFFF)
        let generation = UInt32(truncatingIfNeeded: (data >> 32) & 0xFF_FFFF)
        switch EventKind(rawValue: data >> 56) {
        case .wakeup: drainInbox()
        case .signal: readSignals()
        case .output: readOutput(slot: slot, generation: generation)
        case .exit: reap(slot: slot, generation: generation)
        case nil: break
        }
    }

    private func drainInbox() {
        var counter: UInt64 = 0
        // Resets the eventfd; EAGAIN just means another drain already did.
        _ = read(wakeup.rawValue, &counter, MemoryLayout<UInt64>.size)
        let work = inbox.withLock { inbox in
            var taken: [@Sendable () -> Void] = []
            swap(&taken, &inbox.work)
            return taken
        }
        for item in work { item() }
    }

    private func readSignals() {
        guard let signalDescriptor else { return }
        let capacity = Self.readBufferSize / LinuxCalls.signalInfoSize
        while true {
            let count = read(signalDescriptor.rawValue, readBuffer, capacity * LinuxCalls.signalInfoSize)
            guard count > 0 else { return }   // EAGAIN: all read
            for index in 0..<(count / LinuxCalls.signalInfoSize) {
                let number = readBuffer.load(fromByteOffset: index * LinuxCalls.signalInfoSize, as: UInt32.self)
                if let signal = ProcessSignal(number: CInt(bitPattern: number)) { onSignal?(signal) }
            }
        }
    }

    /// After the loop: let late registrations and teardowns conclude, kill what is still watched.
    private func finish() {
        loopThread.store(0, ordering: .releasing)
        let late = inbox.withLock { inbox in
            inbox.isClosed = true
            var taken: [@Sendable () -> Void] = []
            swap(&taken, &inbox.work)
            return taken
        }
        // Registrations among them see `isRunning == false` and abandon their child.
        for item in late { item() }
        timers.withLock { $0.close() }

        let reason = stopReason ?? SystemError("EventLoop.stop", errno: .canceled)
        for case let child? in children { abandon(child, reason: reason) }
        children.removeAll()
        let pending = teardowns
        teardowns.removeAll()
        for progress in pending.values { for completion in progress.completions { completion() } }

        threadState.withLock { state in
            if let handle = state.handle {
                // No one is joining: detach so the thread's resources are released when it returns.
                pthread_detach(handle)
                state.handle = nil
            }
        }
    }

    // MARK: epoll helpers

    static func eventData(_ kind: EventKind, slot: Int = 0, generation: UInt32 = 0) -> UInt64 {
        kind.rawValue << 56 | UInt64(generation & 0xFF_FFFF) << 32 | UInt64(UInt32(truncatingIfNeeded: slot))
    }

    static func add(
        _ descriptor: FileDescriptor, data: UInt64, to epoll: FileDescriptor, using control: LinuxCalls.EpollControl
    ) throws(SystemError) {
        // Level-triggered EPOLLIN; EPOLLHUP and EPOLLERR are always reported.
        let result = withUnsafeTemporaryAllocation(byteCount: 16, alignment: 8) { event -> CInt in
            event.storeBytes(of: LinuxCalls.epollIn, toByteOffset: 0, as: UInt32.self)
            event.storeBytes(of: data, toByteOffset: LinuxCalls.epollDataOffset, as: UInt64.self)
            return control(epoll.rawValue, LinuxCalls.epollAdd, descriptor.rawValue, event.baseAddress)
        }
        if result == -1 { throw SystemError("epoll_ctl", errno: .current) }
    }
}
