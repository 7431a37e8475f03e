import Glibc

/// The loop's timers: a deadline heap plus the actions of timers not yet fired or cancelled. Behind the
/// `timers` mutex, so any thread can schedule or cancel at once and in order.
struct TimerTable {
    var heap = TimerHeap()
    var actions: [UInt64: @Sendable () -> Void] = [:]
    var nextID: UInt64 = 1
    var isClosed = false

    mutating func close() {
        isClosed = true
        heap = TimerHeap()
        actions.removeAll()
    }

    /// The first live deadline, dropping cancelled entries from the top of the heap.
    mutating func nextDeadline() -> UInt64? {
        while let first = heap.first {
            if actions[first.id] != nil { return first.deadline }
            _ = heap.popFirst()
        }
        return nil
    }
}

extension EventLoop {
    /// Runs `action` on the loop thread once `delay` has passed (measured from this call, on the monotonic
    /// clock); safe from any thread.
    ///
    /// Timers fire in deadline order, those with equal deadlines in the order they were scheduled.
    /// - Returns: an id for `cancel(_:)`; after `stop()` the timer never fires.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> TimerID {
        let deadline = Self.monotonicNanoseconds() &+ Self.nanoseconds(of: delay)
        let id = timers.withLock { table -> UInt64 in
            let id = table.nextID
            table.nextID += 1
            guard !table.isClosed else { return id }
            table.heap.insert(TimerEntry(deadline: deadline, id: id))
            table.actions[id] = action
            return id
        }
        // The loop may be asleep with a later deadline in mind; from its own thread it will look again anyway.
        if !isCurrentThread { wake() }
        return TimerID(rawValue: id)
    }

    /// Cancels a timer that has not fired; safe from any thread.
    ///
    /// On the loop thread the timer is certain not to fire; from another thread it may already be firing.
    public func cancel(_ timer: TimerID) {
        _ = timers.withLock { $0.actions.removeValue(forKey: timer.rawValue) }
    }

    func millisecondsUntilNextTimer() -> CInt {
        guard let deadline = timers.withLock({ $0.nextDeadline() }) else { return -1 }
        let now = Self.monotonicNanoseconds()
        guard deadline > now else { return 0 }
        // Round up: waking a little late is fine, waking early would only spin.
        let milliseconds = (deadline - now + 999_999) / 1_000_000
        return CInt(clamping: milliseconds)
    }

    func fireDueTimers() {
        let now = Self.monotonicNanoseconds()
        let due = timers.withLock { table -> [@Sendable () -> Void] in
            var due: [@Sendable () -> Void] = []
            while let first = table.heap.first, first.deadline <= now {
                _ = table.heap.popFirst()
                if let action = table.actions.removeValue(forKey: first.id) { due.append(action) }
            }
            return due
        }
        for action in due where isRunning { action() }
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// A duration in nanoseconds, negative ones as 0, saturating at the maximum.
    static func nanoseconds(of duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        // A positive duration has both components non-negative.
        guard seconds > 0 || (seconds == 0 && attoseconds > 0) else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        let (total, overflowAgain) = whole.addingReportingOverflow(UInt64(max(attoseconds, 0) / 1_000_000_000))
        return overflow || overflowAgain ? .max : total
    }
}
