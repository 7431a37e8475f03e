import Glibc

/// An environment encoded once as C strings (`NAME=value`), for spawning many children with it.
///
/// Why: a run gives most of its tasks the same environment, and encoding it again for every child (a
/// `NAME=value` string per variable, then a copy of each into C memory) was a tenth of a clean run's
/// user time (perf, 10,000 `touch` tasks). A block is immutable; each spawn copies only its pointers.
///
/// Equal when identical: two blocks are the same environment only if they are the same block.
public final class EnvironmentBlock: Hashable, @unchecked Sendable {
    // `@unchecked`: the C strings are written in `init` only and read-only afterwards.
    /// The number of entries.
    public let count: Int
    /// The value of `PATH`, where a program without a `/` is looked up; `nil` when there is none.
    public let searchPath: String?
    private let entries: CStringArray

    /// Encodes `environment`, without the variable named `excluded`; `nil` when a name or value holds a
    /// NUL byte (C would silently cut it there).
    public convenience init?(_ environment: [String: String], excluding excluded: String? = nil) {
        self.init(entries: Self.entries(of: environment, excluding: excluded))
    }

    /// `environment` as `NAME=value` entries, without the variable named `excluded`.
    public static func entries(of environment: [String: String], excluding excluded: String? = nil) -> [String] {
        var entries: [String] = []
        entries.reserveCapacity(environment.count)
        for (name, value) in environment where name != excluded { entries.append(name + "=" + value) }
        return entries
    }

    /// Encodes `entries`, each `NAME=value`, in this order; `nil` when one holds a NUL byte.
    public init?(entries: [String]) {
        guard let encoded = CStringArray(entries) else { return nil }
        self.entries = encoded
        count = entries.count
        searchPath = ProgramLocator.searchPath(in: entries)
    }

    /// Calls `body` with a NULL-terminated `envp`: these entries, then `extra` (already C strings).
    func withPointers<Result, Failure: Error>(
        adding extra: borrowing CStringArray, count extraCount: Int,
        _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let combined = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: count + extraCount + 1)
        defer { combined.deallocate() }
        combined.update(from: entries.pointers, count: count)
        (combined + count).update(from: extra.pointers, count: extraCount + 1)  // its entries and its NULL
        return try body(combined)
    }

    public static func == (left: EnvironmentBlock, right: EnvironmentBlock) -> Bool { left === right }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
