import JobGraphBasics
#if canImport(Glibc)
import Glibc
#endif

/// What `jobgraph cache stats` shows.
public struct CacheStatistics: Sendable, Equatable {
    public var records = 0
    public var blobs = 0
    /// Bytes of records and blobs.
    public var bytes: Int64 = 0
}

/// What `jobgraph cache gc` did.
public struct CacheCollection: Sendable, Equatable {
    public var removedEntries = 0
    public var removedBytes: Int64 = 0
    public var keptBytes: Int64 = 0
}

extension LocalCacheStore {
    /// One record or blob, with what eviction needs.
    struct Entry {
        var path: String
        var size: Int64
        /// Last use: the modification time, nanoseconds since 1970.
        var used: Int64
        var isRecord: Bool
    }

    /// Every record and blob.
    func entries() -> [Entry] {
        var found: [Entry] = []
        for (folder, isRecord) in [("ac", true), ("cas", false)] {
            let top = directory + "/" + folder
            for shard in DirectoryEntry.entries(of: top) {
                let shardPath = top + "/" + shard.name
                for entry in DirectoryEntry.entries(of: shardPath) {
                    let path = shardPath + "/" + entry.name
                    var info = stat()
                    guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
                    found.append(Entry(path: path, size: Int64(info.st_size),
                                       used: Int64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtim.tv_nsec), isRecord: isRecord))
                }
            }
        }
        return found
    }

    public func statistics() -> CacheStatistics {
        var statistics = CacheStatistics()
        for entry in entries() {
            if entry.isRecord { statistics.records += 1 } else { statistics.blobs += 1 }
            statistics.bytes += entry.size
        }
        return statistics
    }

    /// Removes the least recently used records and blobs until the rest take at most `maxBytes`, and the
    /// temporary files of writers gone for an hour.
    ///
    /// Safe while runs use the cache: a run that reads a record whose blob was just removed finds a miss
    /// and runs the task; it never restores a part.
    /// - Parameter now: seconds since 1970, for the temporary files' age.
    public func collectGarbage(maxBytes: Int64, now: Int64) -> CacheCollection {
        var collection = CacheCollection()
        let temporary = directory + "/tmp"
        for entry in DirectoryEntry.entries(of: temporary) {
            var info = stat()
            let path = temporary + "/" + entry.name
            if lstat(path, &info) == 0, Int64(info.st_mtim.tv_sec) < now - 3600, unlink(path) == 0 {
                collection.removedEntries += 1
                collection.removedBytes += Int64(info.st_size)
            }
        }
        // Oldest first; among equals, records before blobs, so no record is left naming a removed blob longer than needed.
        let entries = entries().sorted { ($0.used, $0.isRecord ? 0 : 1) < ($1.used, $1.isRecord ? 0 : 1) }
        var total = entries.reduce(Int64(0)) { $0 + $1.size }
        for entry in entries where total > maxBytes {
            guard unlink(entry.path) == 0 else { continue }
            total -= entry.size
            collection.removedEntries += 1
            collection.removedBytes += entry.size
        }
        collection.keptBytes = total
        return collection
    }
}
