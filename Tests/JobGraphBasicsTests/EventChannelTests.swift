import Dispatch
import JobGraphBasics
import Testing

/// The channel every run event goes through: nothing lost, nothing reordered, and an end that comes after
/// everything queued.
@Suite(.timeLimit(.minutes(1)))
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
}
