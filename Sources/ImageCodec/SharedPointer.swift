/// A raw pointer handed to the threads of one `RowBands.run`.
///
/// `@unchecked Sendable`: the memory outlives the `run` call that uses it (it belongs to a
/// `withUnsafe…Pointer` scope around it), and concurrent bands write disjoint parts of it, or only read.
struct SharedPointer<Element>: @unchecked Sendable {
    let base: UnsafeMutablePointer<Element>

    init(_ base: UnsafeMutablePointer<Element>) {
        self.base = base
    }
}
