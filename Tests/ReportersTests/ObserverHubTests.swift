import Execution
import JobGraphBasics
import JobGraphTestSupport
import PipelineModel
import Reporters
import Testing

/// The hub between a run's events and its observers: every event reaches every observer once, in order,
/// each batch only after `beforeDelivering` (the history's commit), and the observers close at the end.
@Suite(.hangLimit(minutes: 1))
struct ObserverHubTests {
    /// Notes what it sees, and what `beforeDelivering` had done by then.
    final class Witness: RunObserver, @unchecked Sendable {
        // Only the hub's one task calls it; `committed` is read there too.
        let committed: Locked<Int>
        var seen: [String] = []
        var uncommittedBatches = 0
        var isClosed = false

        init(committed: Locked<Int>) { self.committed = committed }

        func observe(_ event: RunEvent) {}

        func observe(batch events: [RunEvent]) {
            // A batch may only show what was committed: every event seen so far.
            if committed.withLock({ $0 }) < seen.count + events.count { uncommittedBatches += 1 }
            for case .output(_, let line) in events { seen.append(line) }
        }

        func close() { isClosed = true }
    }

    @Test func everyEventReachesEveryObserverInOrderAfterItsCommit() async {
        let channel = EventChannel<RunEvent>()
        let yielded = Locked(0)
        let committed = Locked(0)
        let first = Witness(committed: committed), second = Witness(committed: committed)
        let lines = (0..<300).map { "line \($0)" }
        let producer = Task {
            // In bursts with pauses, so the hub sees quiet reads and busy ones.
            for (index, line) in lines.enumerated() {
                yielded.withLock { $0 += 1 }
                channel.yield(.output(task: "t", line: line))
                if index % 50 == 49 { try? await Task.sleep(for: .milliseconds(30)) }
            }
            channel.finish()
        }
        await ObserverHub.drain(channel, into: [first, second], beforeDelivering: {
            committed.withLock { $0 = yielded.withLock { $0 } }
        })
        await producer.value
        for witness in [first, second] {
            #expect(witness.seen == lines)
            #expect(witness.uncommittedBatches == 0)
            #expect(witness.isClosed)
        }
    }
}
