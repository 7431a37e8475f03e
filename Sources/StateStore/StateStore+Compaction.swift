/// Giving the space of dropped history back to the file system.
///
/// SQLite keeps the pages of deleted rows in the file and reuses them for new rows, so `state.db` never
/// shrinks on its own. Usually that is right: a build drops its oldest run's rows as it writes its own.
/// But when a pipeline shrinks, or its runs stop writing rows of their own (an up-to-date run shares the
/// rows of the run before it, docs/state.md), the free pages outgrow what any run will write again: a
/// folder whose 100,000-task pipeline had been rerun 50 times kept 604 MB free in a 688 MB file.
extension StateStore {
    /// Free space that is worth a compaction: half the file or more, and at least this many bytes.
    static let compactionThreshold = 32 << 20

    /// The file's size before and after a compaction.
    public struct Compaction: Equatable, Sendable {
        public var bytesBefore: Int
        public var bytesAfter: Int
    }

    /// Gives the free pages back when they are half the file or more, and at least `threshold` bytes;
    /// `nil` when they are not. Call with the run lock held and no run writing.
    ///
    /// A file made by this jobgraph has `auto_vacuum = INCREMENTAL`, so an `incremental_vacuum` moves the
    /// last pages into the free ones and cuts the file. An older file is rewritten once by `VACUUM`,
    /// which turns incremental vacuuming on for it: 0.44 s for a 688 MB file holding 84 MB.
    func compactIfMostlyFree(threshold: Int = compactionThreshold) throws(SQLiteError) -> Compaction? {
        try withDatabase { database throws(SQLiteError) -> Compaction? in
            let pageSize = try database.integerPragma("page_size")
            let pages = try database.integerPragma("page_count")
            let free = try database.integerPragma("freelist_count")
            guard free * 2 >= pages, free * pageSize >= threshold else { return nil }
            if try database.integerPragma("auto_vacuum") == Self.incrementalVacuum {
                try database.execute("PRAGMA incremental_vacuum")
            } else {
                try database.execute("PRAGMA auto_vacuum = INCREMENTAL; VACUUM")
            }
            return Compaction(bytesBefore: pages * pageSize, bytesAfter: try database.integerPragma("page_count") * pageSize)
        }
    }

    /// `PRAGMA auto_vacuum`'s value for `INCREMENTAL`.
    static let incrementalVacuum = 2
}
