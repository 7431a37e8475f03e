@testable import TaskGraph
import Testing

/// The graph's adjacency in two flat arrays must read like an array of arrays.
@Suite struct AdjacencyListsTests {
    @Test func rowsAreZeroBasedListsInOrder() {
        let lists = AdjacencyLists([[], [0], [0, 1], [2]])
        #expect(lists.count == 4)
        #expect(lists[2] == [0, 1])
        #expect(lists[2][1] == 1)
        #expect(lists[0].isEmpty)
        #expect(lists.totalCount == 4)
        #expect(lists.map { Array($0) } == [[], [0], [0, 1], [2]])
    }

    @Test func reversedListsPointBackAscending() {
        let lists = AdjacencyLists([[], [0], [0, 1], [2]])
        #expect(lists.reversed() == [[1, 2], [2], [3], []])
    }

    @Test func builderEndsOneRowPerNode() {
        var builder = AdjacencyBuilder(nodeCapacity: 3, edgeCapacity: 2)
        builder.endNode()
        builder.append(0)
        builder.endNode()
        builder.append(1)
        builder.append(0)
        builder.endNode()
        #expect(builder.build() == [[], [0], [1, 0]])
    }
}
