import Testing
@testable import TaskGraph

@Suite struct IndexPriorityQueueTests {
    @Test(arguments: [1, 64, 65, 4_096, 4_097, 300_000])
    func handsOutTheSmallestMemberFirstAtEveryCapacity(capacity: Int) {
        var random = LinearCongruential(seed: UInt64(capacity))
        var queue = IndexPriorityQueue(capacity: capacity)
        var members: Set<Int> = []
        var popped: [Int] = []
        var expected: [Int] = []
        for round in 0..<2_000 {
            if round % 3 == 2, let smallest = members.min() {
                expected.append(smallest)
                members.remove(smallest)
                popped.append(queue.popFirst() ?? -1)
            } else {
                let index = random.next(below: capacity)
                members.insert(index)
                queue.insert(index)
            }
        }
        while let next = queue.popFirst() { popped.append(next) }
        expected += members.sorted()

        #expect(popped == expected)
        #expect(queue.isEmpty)
        #expect(queue.popFirst() == nil)
    }
}
