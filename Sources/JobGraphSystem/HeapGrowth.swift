import Glibc

/// How far malloc grows its heaps at a time (glibc's `M_TOP_PAD`).
public enum HeapGrowth {
    /// Bytes added beyond each request when a heap grows: address space only, whose pages are faulted in
    /// as they are touched, so resident memory does not grow with it.
    public static let step: Int32 = 16 << 20

    /// Has malloc grow its heaps by `step` at a time. Returns whether malloc took the setting. Call before
    /// any other thread exists: a thread's arena reserves `step` when it is made, and grows by pages after.
    ///
    /// Why: by default a thread's arena grows by the pages each request needs, one `mprotect` call at a
    /// time: 4,880 calls in a checked no-op rerun of `noop-rerun.sh`'s 10,000 layered tasks (`strace -c`),
    /// each holding the process's memory map lock, which the page faults of the other threads then wait
    /// for. With 16 MiB steps there were 179 (Benchmarks/README.md, "The checked no-op rerun profiled again").
    @discardableResult
    public static func growInLargeSteps() -> Bool {
        // `mallopt` is declared in <malloc.h>, which Glibc's module does not include; `M_TOP_PAD` is -2 there.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return false }  // RTLD_DEFAULT
        let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        return mallopt(-2, step) == 1
    }
}
