import Foundation
import JobGraphBasics
import JobGraphTestSupport
import PipelineModel
import Testing
@testable import StateStore

/// The history thread: `flush()` waits for the rows a kill must not lose before the observers show them,
/// and not for up-to-date verdicts, which a no-op rerun queues by the thousand before its first line.
@Suite(.hangLimit(minutes: 1))
struct HistoryWriterTests {
    /// A writer whose commits wait until the test opens `gate`; the rows it committed, in order.
    final class GatedStore: @unchecked Sendable {
        let gate = DispatchSemaphore(value: 0)
        let committed = Locked<[HistoryWrite]>([])
        func write(_ rows: [HistoryWrite]) {
            gate.wait()
            committed.withLock { $0 += rows }
        }
    }

    private func ended(_ task: TaskID, _ state: TaskState) -> HistoryWrite {
        .ended(TaskRecord(task: task, state: state, attempts: state == .upToDate ? 0 : 1), fingerprints: nil)
    }

    @Test func flushDoesNotWaitForUpToDateVerdictsButForEverythingElse() {
        let store = GatedStore()
        let writer = HistoryWriter { rows in store.write(rows) }
        writer.append(ended("a", .upToDate), flushed: false)
        writer.append(ended("b", .upToDate), flushed: false)
        // Returns although nothing is committed yet (the gate is shut): were it to wait, the test would hang.
        writer.flush()
        #expect(store.committed.withLock { $0 }.isEmpty)

        writer.append(ended("c", .succeeded))
        let flushed = Locked(false), done = DispatchSemaphore(value: 0)
        let flusher = Thread {
            writer.flush()
            flushed.withLock { $0 = true }
            done.signal()
        }
        flusher.start()
        // The writer has all three rows queued or in hand; the flush can only end once they are committed.
        #expect(!flushed.withLock { $0 } || store.committed.withLock { $0 }.count == 3)
        for _ in 0..<2 { store.gate.signal() }  // at most two transactions: [a, b] and [c], or all at once
        done.wait()
        #expect(store.committed.withLock { $0 } == [ended("a", .upToDate), ended("b", .upToDate), ended("c", .succeeded)])
        writer.close()
    }
}
