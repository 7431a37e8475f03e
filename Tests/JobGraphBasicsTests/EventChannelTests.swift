import Dispatch
import Foundation
import JobGraphBasics
import JobGraphTestSupport
import Testing

/// The channel every run event goes through: nothing lost, nothing reordered, and an end that comes after
/// everything queued.
@Suite(.hangLimit(minutes: 1))
struct EventChannelTests {
    @Test func elementsQueuedBeforeTheConsumerComesArriveInOrderThenTheEnd() async {
        let channel = EventChannel<Int>()
        for number in 0..<5 { channel.yield(number) }
        channel.finish()
        channel.yield(99)  // after the end: dropped
        var received: [Int] = []
        for await number in channel { received.append(number) }
        #expect(received == [0, 1, 2, 3, 4])
    }

    @Test func aWaitingConsumerIsWokenAndEveryProducersOrderIsKept() async {
        let channel = EventChannel<(producer: Int, sequence: Int)>()
        let producers = 4, perProducer = 5_000
        let consumer = Task {
            var received: [(producer: Int, sequence: Int)] = []
            for await element in channel { received.append(element) }
            return received
        }
        // Several threads at once, some while the consumer waits and some while it reads.
        DispatchQueue.concurrentPerform(iterations: producers) { producer in
            for sequence in 0..<perProducer { channel.yield((producer, sequence)) }
        }
        channel.finish()
        let received = await consumer.value
        #expect(received.count == producers * perProducer)
        for producer in 0..<producers {
            let sequences = received.filter { $0.producer == producer }.map(\.sequence)
            #expect(sequences == Array(0..<perProducer), "producer \(producer) reordered or lost elements")
        }
    }

    /// A run queues its Plan's transitions a batch at a time: each batch whole and in order, between
    /// single elements of other threads, whether the consumer waits or not.
    @Test func batchesArriveWholeAndInOrder() async {
        let channel = EventChannel<(producer: Int, sequence: Int)>()
        let producers = 4, batches = 500, batchSize = 10
        let consumer = Task {
            var received: [(producer: Int, sequence: Int)] = []
            for await element in channel { received.append(element) }
            return received
        }
        DispatchQueue.concurrentPerform(iterations: producers) { producer in
            for batch in 0..<batches {
                if producer == 0 {
                    channel.yield((0, batch))  // the single-element kind, between batches
                    continue
                }
                channel.yield(contentsOf: (0..<batchSize).map { (producer, batch * batchSize + $0) })
            }
        }
        channel.yield(contentsOf: [])
        channel.finish()
        channel.yield(contentsOf: [(9, 9)])  // after the end: dropped
        let received = await consumer.value
        #expect(received.count == batches + (producers - 1) * batches * batchSize)
        for producer in 1..<producers {
            let sequences = received.filter { $0.producer == producer }.map(\.sequence)
            #expect(sequences == Array(0..<batches * batchSize), "producer \(producer) reordered or lost elements")
        }
        // No batch is split by another thread's element.
        var index = 0
        while index < received.count {
            let element = received[index]
            if element.producer == 0 { index += 1; continue }
            #expect(element.sequence % batchSize == 0)
            let batch = received[index..<min(received.count, index + batchSize)]
            #expect(batch.map(\.producer) == Array(repeating: element.producer, count: batchSize))
            index += batchSize
        }
    }

    @Test func finishingWakesAConsumerWaitingOnAnEmptyChannel() async {
        let channel = EventChannel<String>()
        let consumer = Task {
            var count = 0
            for await _ in channel { count += 1 }
            return count
        }
        try? await Task.sleep(for: .milliseconds(20))  // let it wait; the result is the same if it has not yet
        channel.finish()
        #expect(await consumer.value == 0)
    }

    /// A paced consumer (the observers) sees the end of a run at once, not when its pause runs out: the
    /// run's summary and exit wait for it.
    @Test func finishingEndsAPauseAtOnce() async {
        let channel = EventChannel<Int>()
        let returned = Locked(false)
        // A thread of its own, as `ObserverHub` pauses on: the pause blocks it.
        Thread {
            channel.pause(for: .seconds(600))
            returned.withLock { $0 = true }
        }.start()
        try? await Task.sleep(for: .milliseconds(20))  // let it pause; the result is the same if it has not yet
        channel.finish()
        // Polled, not awaited: a pause that `finish()` did not end would hang the test instead of failing it.
        for _ in 0..<3000 where !returned.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(10)) }
        #expect(returned.withLock { $0 }, "the pause outlasted 3,000 polls after the channel finished")
        // Once finished, a pause does not wait at all.
        channel.pause(for: .seconds(600))
        #expect(channel.takeAvailable().isFinished)
    }

    @Test func aPauseLastsItsDurationWhileTheChannelIsOpenAndLetsEventsQueue() async {
        let channel = EventChannel<Int>()
        let clock = ContinuousClock()
        let start = clock.now
        // Queued first, so that no timing decides whether it comes during the pause: an element does not
        // wake a pause (only `finish()` does), queued before it or while it lasts.
        channel.yield(1)
        channel.pause(for: .milliseconds(100))
        #expect(clock.now - start >= .milliseconds(100))
        let (elements, isFinished) = channel.takeAvailable()
        #expect(elements == [1] && !isFinished)
    }
}
