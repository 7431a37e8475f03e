import Dispatch

extension Array {
    /// `map(transform)`, with the elements split into `ways` runs of neighbours, each mapped on a thread of
    /// its own (this thread one of them); the results in the elements' order. `transform` is told which way
    /// (`0..<ways`) calls it, and must be safe to call from several ways at once.
    public func mapConcurrently<Result>(ways: Int, _ transform: (Element, _ way: Int) -> Result) -> [Result] {
        let ways = Swift.min(ways, count)
        guard ways > 1 else { return map { transform($0, 0) } }
        return withoutActuallyEscaping(transform) { transform in
            // Each way writes only its own run of `results`, and reads `self` and `transform`, which no one
            // changes meanwhile; `concurrentPerform` returns once every way is done.
            nonisolated(unsafe) let transform = transform
            nonisolated(unsafe) let elements = self
            return [Result](unsafeUninitializedCapacity: count) { buffer, initialized in
                nonisolated(unsafe) let results = buffer.baseAddress!
                let count = self.count
                DispatchQueue.concurrentPerform(iterations: ways) { way in
                    for index in (count * way / ways)..<(count * (way + 1) / ways) {
                        (results + index).initialize(to: transform(elements[index], way))
                    }
                }
                initialized = count
            }
        }
    }
}
