/// A binary min-heap: O(log n) insert and pop, O(1) peek. Equal elements come out in no set order, so
/// give elements a tie-breaker (a sequence number, a file position) when order matters.
public struct BinaryHeap<Element: Comparable>: Sendable where Element: Sendable {
    private var elements: [Element] = []

    public init() {}

    public var first: Element? { elements.first }
    public var isEmpty: Bool { elements.isEmpty }
    public var count: Int { elements.count }

    public mutating func insert(_ element: Element) {
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard elements[child] < elements[parent] else { break }
            elements.swapAt(child, parent)
            child = parent
        }
    }

    public mutating func popFirst() -> Element? {
        guard let top = elements.first else { return nil }
        let last = elements.removeLast()
        if !elements.isEmpty {
            elements[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < elements.count, elements[left] < elements[smallest] { smallest = left }
                if right < elements.count, elements[right] < elements[smallest] { smallest = right }
                if smallest == parent { break }
                elements.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return top
    }

    /// Removes and returns every element, in no particular order.
    public mutating func removeAll() -> [Element] {
        defer { elements.removeAll() }
        return elements
    }
}
