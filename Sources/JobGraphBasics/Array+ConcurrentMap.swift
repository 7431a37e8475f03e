import Dispatch
import Synchronization

extension Array {
    /// `map(transform)` on `ways` threads at once (this thread one of them): each thread takes the next run
    /// of neighbouring elements still unmapped until none is left, so one costly element holds up only its
    /// own thread; the results in the elements' order. `transform` is told which way (`0..<ways`) calls it,
    /// and must be safe to call from several ways at once.
    ///
    /// Why runs taken as the threads go, not one fixed share each: the thread whose share held the costly
    /// elements ended last while the others waited. Given the costly ones first, the threads now end
    /// together: the up-to-date pass over Benchmarks/snakemake.sh's 2,000-sample workflow, whose one task
    /// over 4,001 files came last, had its two threads end 6.4 ms apart, and 0.1 ms apart now (median of
    /// 11 runs each).
    public func mapConcurrently<Result>(ways: Int, _ transform: (Element, _ way: Int) -> Result) -> [Result] {
        let ways = Swift.min(ways, count)
        guard ways > 1 else { return map { transform($0, 0) } }
        // About eight runs a way, of at most 64: few enough to claim cheaply, small enough to even out.
        let run = Swift.max(1, Swift.min(64, count / (ways * 8)))
        let next = Atomic<Int>(0)
        return withoutActuallyEscaping(transform) { transform in
            // Each way writes only the runs it claimed of `results`, and reads `self` and `transform`, which
            // no one changes meanwhile; `concurrentPerform` returns once every way is done.
            nonisolated(unsafe) let transform = transform
            nonisolated(unsafe) let elements = self
            return [Result](unsafeUninitializedCapacity: count) { buffer, initialized in
                nonisolated(unsafe) let results = buffer.baseAddress!
                let count = self.count
                DispatchQueue.concurrentPerform(iterations: ways) { way in
                    while case let start = next.add(run, ordering: .relaxed).oldValue, start < count {
                        for index in start..<Swift.min(start + run, count) {
                            (results + index).initialize(to: transform(elements[index], way))
                        }
                    }
                }
                initialized = count
            }
        }
    }
}
