import Dispatch
import JobGraphBasics
import Testing

/// `Array.mapConcurrently`: the up-to-date pre-pass checks its tasks through it, a lane per way.
@Suite struct ArrayConcurrentMapTests {
    @Test(arguments: [1, 2, 3, 8])
    func theResultsAreMapsOfTheElementsInTheirOrder(ways: Int) {
        let numbers = Array(0..<1_000)
        #expect(numbers.mapConcurrently(ways: ways) { number, _ in "\(number * 3)" } == numbers.map { "\($0 * 3)" })
    }

    @Test func eachElementIsMappedOnceInRunsOfNeighbours() {
        let ways = numbersOfWays(elements: 1_000, ways: 3)
        #expect(ways.count == 1_000 && ways.allSatisfy { (0..<3).contains($0) })
        // Runs of 41 (1,000 / 24): a way changes only where a run ends.
        #expect(ways.indices.dropFirst().allSatisfy { $0 % 41 == 0 || ways[$0] == ways[$0 - 1] })
    }

    /// A costly element holds up only its own way: the others map the rest, its own half included. With a
    /// fixed half a way, element 499 waited behind element 0, which waits for it.
    @Test func aCostlyElementDoesNotHoldUpTheElementsAfterIt() {
        let lastOfTheFirstHalf = DispatchSemaphore(value: 0)
        let mapped = Array(0..<1_000).mapConcurrently(ways: 2) { number, _ -> Bool in
            if number == 499 { lastOfTheFirstHalf.signal() }
            // The guard only ends a hang: the other way maps element 499 however slowly it runs.
            return number != 0 || lastOfTheFirstHalf.wait(timeout: .now() + .seconds(120)) == .success
        }
        #expect(mapped.allSatisfy { $0 })
    }

    @Test func moreWaysThanElementsUseNoMoreWaysThanElements() {
        let ways = numbersOfWays(elements: 3, ways: 8)
        #expect(ways.count == 3 && ways.allSatisfy { (0..<3).contains($0) })
        #expect([Int]().mapConcurrently(ways: 4) { number, _ in number }.isEmpty)
    }

    /// The way that mapped each element.
    private func numbersOfWays(elements: Int, ways: Int) -> [Int] {
        Array(0..<elements).mapConcurrently(ways: ways) { _, way in way }
    }
}
