import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Splits a range of rows (or columns) into bands and runs them on every core with `concurrentPerform`,
/// checking for cancellation before each band.
enum RowBands {
    /// Online processors, read once; at least 1.
    static let processorCount = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))

    /// Runs `body` once per band of `0..<count`, concurrently, and returns after the last band.
    ///
    /// Bands hold at least `minimum` items so small images stay on one thread (a thread hop costs more
    /// than filtering a few rows), and there are several per core so an unlucky thread does not finish last
    /// alone and cancellation is noticed soon.
    /// - Returns: false when `cancellation` was set, in which case some bands were skipped.
    static func run(_ count: Int, minimum: Int = 8, cancellation: CancellationFlag?, _ body: @Sendable (Range<Int>) -> Void) -> Bool {
        guard count > 0 else { return !(cancellation?.isCancelled ?? false) }
        let bandSize = max(minimum, (count + processorCount * 8 - 1) / (processorCount * 8))
        let bandCount = (count + bandSize - 1) / bandSize
        if bandCount == 1 {
            if cancellation?.isCancelled != true { body(0..<count) }
        } else {
            DispatchQueue.concurrentPerform(iterations: bandCount) { band in
                if cancellation?.isCancelled == true { return }
                body(band * bandSize ..< min(count, (band + 1) * bandSize))
            }
        }
        return !(cancellation?.isCancelled ?? false)
    }
}
