import Dispatch

/// An asynchronous sequence with one consumer that takes everything queued at once: where `AsyncStream`
/// resumes its consumer once per element, a consumer of this channel wakes once per burst and then reads
/// the rest of the burst without suspending. A run of 10,000 short tasks sends 30,000 transitions; waking
/// an observer task for each one cost more than the observers' work.
///
/// Safe to `yield` from any thread. Iterate it from one task only, or read it with `takeAvailable()` and
/// `pause(for:)` from one thread only.
public final class EventChannel<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = Never

    private struct State {
        var queued: [Element] = []
        var waiter: CheckedContinuation<[Element], Never>?
        /// A consumer in `pause(for:)`, woken by `finish()` or its timeout, whichever comes first.
        var pauser: DispatchSemaphore?
        var isFinished = false
    }

    private let state = Locked(State())

    public init() {}

    /// Queues `element` for the consumer; ignored once the channel is finished.
    public func yield(_ element: Element) {
        let waiter = state.withLock { state -> CheckedContinuation<[Element], Never>? in
            guard !state.isFinished else { return nil }
            // A waiting consumer has read everything queued, so `element` comes first, before anything
            // another thread queues once this lock is let go.
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.queued.append(element)
            return nil
        }
        waiter?.resume(returning: [element])
    }

    /// Queues `elements` in order, as one `yield` each would, taking the lock once.
    public func yield(contentsOf elements: [Element]) {
        guard !elements.isEmpty else { return }
        let waiter = state.withLock { state -> CheckedContinuation<[Element], Never>? in
            guard !state.isFinished else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            // Taken as is when nothing waits before it: a no-op rerun of 100,000 tasks queues 300,000
            // transitions at once, and a copy of them cost 20 MB.
            if state.queued.isEmpty { state.queued = elements } else { state.queued += elements }
            return nil
        }
        waiter?.resume(returning: elements)
    }

    /// Ends the sequence once the consumer has read what is queued.
    public func finish() {
        let (waiter, pauser) = state.withLock { state in
            state.isFinished = true
            defer {
                state.waiter = nil
                state.pauser = nil
            }
            return (state.waiter, state.pauser)
        }
        waiter?.resume(returning: [])
        pauser?.signal()
    }

    /// Returns after `duration`, or as soon as the channel is finished: for a consumer that paces itself
    /// with `takeAvailable()` on a thread of its own, which this blocks (never call it from Swift's
    /// cooperative pool). Sleeping out its pace after the last batch kept every run waiting for up to that
    /// long after its last event (50 ms for `ObserverHub`). Call from the one consumer only.
    public func pause(for duration: Duration) {
        let wake = DispatchSemaphore(value: 0)
        let finished = state.withLock { state -> Bool in
            if state.isFinished { return true }
            state.pauser = wake
            return false
        }
        if finished { return }
        let (seconds, attoseconds) = duration.components
        _ = wake.wait(timeout: .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
        // Gone already when `finish()` woke it; a signal that comes after the timeout wakes nobody.
        state.withLock { $0.pauser = nil }
    }

    /// Everything queued now, without waiting, and whether the channel is finished (nothing more will come
    /// once this is read). For a consumer that paces itself instead of waking for every burst.
    public func takeAvailable() -> (elements: [Element], isFinished: Bool) {
        state.withLock { state in
            let elements = state.queued
            state.queued = []
            return (elements, state.isFinished)
        }
    }

    /// Everything queued, waiting for at least one element; empty once finished and read.
    fileprivate func takeAll() async -> [Element] {
        if let ready = state.withLock({ Self.takeQueued(&$0) }) { return ready }
        return await withCheckedContinuation { waiter in
            let ready = state.withLock { state -> [Element]? in
                if let ready = Self.takeQueued(&state) { return ready }
                state.waiter = waiter
                return nil
            }
            if let ready { waiter.resume(returning: ready) }
        }
    }

    private static func takeQueued(_ state: inout State) -> [Element]? {
        if !state.queued.isEmpty {
            defer { state.queued = [] }
            return state.queued
        }
        return state.isFinished ? [] : nil
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let channel: EventChannel
        private var batch: [Element] = []
        private var position = 0

        fileprivate init(channel: EventChannel) {
            self.channel = channel
        }

        public mutating func next() async -> Element? {
            if position == batch.count {
                batch = await channel.takeAll()
                position = 0
                guard !batch.isEmpty else { return nil }
            }
            defer { position += 1 }
            return batch[position]
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(channel: self)
    }
}
