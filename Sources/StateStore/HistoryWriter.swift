import Foundation

/// Writes a run's history rows on a thread of its own, in order, many rows to a transaction.
///
/// Why a thread: a SQLite commit per finished task cost about 43,000 instructions (callgrind, 1,000
/// `touch` tasks: `StateStore.record` was 15% of the whole run) and ran on the event loop's thread,
/// between one child's exit and the next child's spawn. Rows now queue in memory and this thread commits
/// whatever has queued since its last commit, so the faster tasks end, the larger each transaction.
///
/// A row that must be durable before the run goes on is appended with `waitUntilWritten`, which returns
/// once its transaction committed: the withdrawal of a trusted success before its task executes, when the
/// recorder could not commit it at once itself (`RunRecorder.started`). The
/// rest gather for up to `interval`, or until `flush()`, which the run's observers call before they show
/// a batch of events: what a user sees has ended is recorded, and a kill right after loses nothing shown.
/// A prompt commit per finished task instead cost a tenth of a 10,000-task run's wall time.
///
/// `@unchecked Sendable`: the queue and counters are only touched while holding `condition`.
final class HistoryWriter: @unchecked Sendable {
    private let condition = NSCondition()
    private var queued: [HistoryWrite] = []
    private var appended = 0
    /// The last row appended that `flush()` waits for.
    private var shownMark = 0
    private var written = 0
    private var isClosing = false
    /// Callers waiting for their row's commit: the writer then commits at once.
    private var waiters = 0
    private var isClosed = false
    private let write: @Sendable ([HistoryWrite]) -> Void
    /// Rows that make a transaction worth starting at once.
    private static let batchSize = 1024
    /// Seconds rows may wait for more to join them.
    private static let interval = 0.05

    /// - Parameter write: writes a batch in one transaction; called on the writer's thread only.
    init(write: @escaping @Sendable ([HistoryWrite]) -> Void) {
        self.write = write
        let thread = Thread { [self] in drain() }
        thread.name = "jobgraph history"
        thread.start()
    }

    /// Queues `row`; with `waitUntilWritten`, returns only once it is committed (or the writer gave up).
    /// - Parameter flushed: whether `flush()` waits for it; a row a kill may lose at no cost (an up-to-date
    ///   verdict the next run reaches again) need not hold up what the observers show: 10,000 of them,
    ///   committed before a no-op rerun's first lines, kept its observers waiting (callgrind, 224 M
    ///   instructions on the history thread).
    /// - Parameter promptly: wake the writer at once, rather than when rows have gathered: work it can
    ///   do while the caller goes on.
    func append(_ row: HistoryWrite, waitUntilWritten: Bool = false, flushed: Bool = true, promptly: Bool = false) {
        condition.lock()
        defer { condition.unlock() }
        guard !isClosing else { return }
        queued.append(row)
        appended += 1
        let number = appended
        if flushed { shownMark = number }
        // Waking the writer for every row cost a context switch per task; it wakes by itself every
        // `interval`, and at once only for a row someone waits for or a full batch.
        if waitUntilWritten || promptly || queued.count >= Self.batchSize { condition.broadcast() }
        if waitUntilWritten { wait(until: number) }
    }

    /// Returns once every row appended so far that `flush()` waits for is committed (or the writer gave up).
    func flush() {
        condition.lock()
        defer { condition.unlock() }
        guard written < shownMark else { return }
        condition.broadcast()
        wait(until: shownMark)
    }

    /// Waits, holding `condition`, until row `number` is committed.
    private func wait(until number: Int) {
        waiters += 1
        while written < number && !isClosed { condition.wait() }
        waiters -= 1
    }

    /// Writes what is queued and ends the thread; returns once everything is committed. Call once.
    func close() {
        condition.lock()
        isClosing = true
        condition.broadcast()
        while !isClosed { condition.wait() }
        condition.unlock()
    }

    private func drain() {
        condition.lock()
        while true {
            while queued.isEmpty && !isClosing { condition.wait() }
            if !isClosing && queued.count < Self.batchSize && waiters == 0 {
                // Let a burst of rows gather into one transaction, unless a caller waits for them.
                _ = condition.wait(until: Date(timeIntervalSinceNow: Self.interval))
            }
            if queued.isEmpty { break }
            let batch = queued
            let target = appended
            queued.removeAll(keepingCapacity: true)
            condition.unlock()
            write(batch)
            condition.lock()
            written = target
            condition.broadcast()
        }
        isClosed = true
        condition.broadcast()
        condition.unlock()
    }
}
