import JobGraphBasics
import Testing

/// `Array.mapConcurrently`: the up-to-date pre-pass checks its tasks through it, a lane per way.
@Suite struct ArrayConcurrentMapTests {
    @Test(arguments: [1, 2, 3, 8])
    func theResultsAreMapsOfTheElementsInTheirOrder(ways: Int) {
        let numbers = Array(0..<1_000)
        #expect(numbers.mapConcurrently(ways: ways) { number, _ in "\(number * 3)" } == numbers.map { "\($0 * 3)" })
    }

    @Test func eachWayMapsOneRunOfNeighboursAndNoWayIsLeftOut() {
        let ways = numbersOfWays(elements: 10, ways: 3)
        // 10 elements in 3 ways: 3, 3 and 4 neighbours.
        #expect(ways == [0, 0, 0, 1, 1, 1, 2, 2, 2, 2])
    }

    @Test func moreWaysThanElementsGiveEachElementAWayOfItsOwn() {
        #expect(numbersOfWays(elements: 3, ways: 8) == [0, 1, 2])
        #expect([Int]().mapConcurrently(ways: 4) { number, _ in number }.isEmpty)
    }

    /// The way that mapped each element.
    private func numbersOfWays(elements: Int, ways: Int) -> [Int] {
        Array(0..<elements).mapConcurrently(ways: ways) { _, way in way }
    }
}
